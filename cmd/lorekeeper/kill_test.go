package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lorekeeper.dev/embedder/natsconsume"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// upProcess is `lorekeeper up` running as a subprocess on fixed loopback
// ports, so that a restart finds it where it was.
type upProcess struct {
	bin, dir                                 string
	natsAddr, grpcAddr, mcpAddr, metricsAddr string
	cmd                                      *exec.Cmd
}

func (p *upProcess) start(t *testing.T) {
	t.Helper()
	p.cmd = exec.Command(p.bin, "up",
		"--data-dir", p.dir,
		"--nats-listen", p.natsAddr,
		"--grpc-addr", p.grpcAddr,
		"--mcp-addr", p.mcpAddr,
		"--metrics-addr", p.metricsAddr,
		"--model-dir", testModelDir(t),
		"--orcbrew-dir", filepath.Join(p.dir, "orcbrew"),
		"--log-level", "warn",
	)
	p.cmd.Stderr = testWriter{t}
	startChild(t, p.cmd)
}

// startChild starts cmd and kills it at the end of the test if it is still
// running then.
func startChild(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
}

// status asks the query service; ok is false while it does not answer.
func (p *upProcess) status(t *testing.T) (*lkv1.StatusResponse, bool) {
	return queryStatus(t, p.grpcAddr, p.dir)
}

// queryStatus asks the query service at addr for its status, with the
// token of the data directory dir, waiting at most 2 s; ok is false while
// it does not answer.
func queryStatus(t *testing.T, addr, dir string) (_ *lkv1.StatusResponse, ok bool) {
	t.Helper()
	tok := ""
	if dir != "" {
		tok, _ = readToken(tokenPath(dir, grpcToken)) // none yet: not answering
	}
	conn, client, err := dialQuery(addr, nil, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	s, err := client.Status(ctx, &lkv1.StatusRequest{})
	return s, err == nil
}

// storedSoFar is the entities a node at metricsAddr has stored, from its
// metrics; 0 while it does not answer yet.
func storedSoFar(metricsAddr string) uint64 {
	n, _, err := scrapeSum(metricsAddr, `lorekeeper_embedder_messages_total{outcome="stored"}`)
	if err != nil {
		return 0
	}
	return uint64(n)
}

// loopbackAddr is 127.0.0.1 with a port free now.
func loopbackAddr(t *testing.T) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
}

// TestUp_SIGKILLDuringFirstLoad: `lorekeeper up` killed with SIGKILL
// during its first load and started again ends with exactly the snapshot's
// entities, a vector for each and no dead letters, and catches up without
// waiting out the dead process's unacknowledged batch. The catch-up time,
// and the time embedding what remained takes at the first run's rate, are
// logged (figures, not assertions).
func TestUp_SIGKILLDuringFirstLoad(t *testing.T) {
	snapshot := snapshotCount(t)
	p := &upProcess{bin: buildBinary(t), dir: t.TempDir(), natsAddr: loopbackAddr(t), grpcAddr: loopbackAddr(t),
		mcpAddr: loopbackAddr(t), metricsAddr: loopbackAddr(t)}

	p.start(t)
	// Kill it early in the load, once its metrics have shown it storing
	// twice, noting the rate it stored at. (The query service answers
	// only once the first load is done; the snapshot's count, read under
	// the race detector, takes longer than a whole first load.)
	var firstAt time.Time
	var firstN, killedAt uint64
	var rate float64 // entities stored per second, first run
	waitUntilFor(t, 10*time.Minute, "the first load storing", func() bool {
		n := storedSoFar(p.metricsAddr)
		switch {
		case n == 0:
			return false
		case firstAt.IsZero():
			firstAt, firstN = time.Now(), n
			return false
		case n == firstN:
			return false
		}
		killedAt = n
		rate = float64(killedAt-firstN) / time.Since(firstAt).Seconds()
		return true
	})
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	want := snapshot()
	if killedAt >= want {
		t.Fatalf("the first load was done (%d of %d stored) before the kill: nothing left to catch up", killedAt, want)
	}
	t.Logf("killed with SIGKILL at about %d of %d entities (first run stored %.0f entities/s)", killedAt, want, rate)

	restart := time.Now()
	p.start(t)
	var remaining uint64
	var last *lkv1.StatusResponse
	waitUntilFor(t, 10*time.Minute, "every entity stored after the restart", func() bool {
		s, ok := p.status(t)
		if !ok {
			return false
		}
		if remaining == 0 {
			remaining = want - min(want, s.GetEntities())
		}
		last = s
		return s.GetEntities() == want && s.GetVectors() == want && s.GetPending() == 0
	})
	took := time.Since(restart)
	expected := time.Duration(float64(remaining) / rate * float64(time.Second))
	t.Logf("restarted: %d entities remained; caught up in %s; embedding them at the first run's rate takes %s (ratio %.2f)",
		remaining, took.Round(time.Millisecond), expected.Round(time.Millisecond), took.Seconds()/expected.Seconds())

	if last.GetEntities() != want || last.GetVectors() != want {
		t.Errorf("%d entities and %d vectors, want %d of each", last.GetEntities(), last.GetVectors(), want)
	}
	if n := streamLen(t, "nats://"+p.natsAddr, p.dir, natsconsume.DeadLetterStream); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
	// Issue 49, row 10: stopped while 32 MCP sessions are busy, every
	// call gets its answer, or "shutting down", or a refused connection:
	// no empty answer, no reset connection.
	outcomes := busySessions(t, "http://"+p.mcpAddr+"/mcp", 32, func() {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("graceful stop after the restart: %v", err)
		}
	})
	t.Logf("calls after SIGTERM with 32 sessions busy: %v", outcomes)
	for k := range outcomes {
		if k != "answered" && k != "shutting down" && k != "refused" {
			t.Errorf("a call after SIGTERM: %s (%d); want answered, shutting down or refused", k, outcomes[k])
		}
	}
}

// busySessions runs n MCP sessions calling a tool in a loop on keep-alive
// connections, calls stop once they are busy, and counts what the calls
// made after it got.
func busySessions(t *testing.T, url string, n int, stop func()) map[string]int {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * n}}
	post := func(sid, body string) (*http.Response, string, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, "", err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b), err
	}
	var mu sync.Mutex
	var stopped atomic.Bool
	out := map[string]int{}
	var busy, done sync.WaitGroup
	for range n {
		busy.Add(1)
		done.Go(func() {
			resp, _, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"busy","version":"1"}}}`)
			if err != nil {
				t.Errorf("initialize: %v", err)
				busy.Done()
				return
			}
			sid := resp.Header.Get("Mcp-Session-Id")
			_, _, _ = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			busy.Done()
			for i := 2; ; i++ {
				after := stopped.Load()
				resp, body, err := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_dnd_content","arguments":{"query":"fire damage"}}}`, i))
				what := "answered"
				switch {
				case err != nil && errors.Is(err, syscall.ECONNREFUSED):
					what = "refused"
				case err != nil:
					what = "error: " + err.Error()
				case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "shutting down"):
					what = "shutting down"
				case resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`):
					what = fmt.Sprintf("HTTP %d %.80q", resp.StatusCode, body)
				}
				if after {
					mu.Lock()
					out[what]++
					mu.Unlock()
				}
				if after && what == "refused" {
					return
				}
			}
		})
	}
	busy.Wait()
	time.Sleep(time.Second)
	stopped.Store(true)
	stop()
	done.Wait()
	return out
}

func waitUntilFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %s", what, bound)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

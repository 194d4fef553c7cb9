package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestReadiness_MCPListener(t *testing.T) {
	ready := &readiness{}
	ready.expect("mcp")
	if got := ready.run(t.Context())["mcp"]; got == "ok" {
		t.Fatal("mcp ready before it started")
	}
	m, err := startMCPHTTP(t.Context(), newSupervisor(t.Context(), testLogger(t)), "127.0.0.1:1", nil, "", &mcpHTTPFlags{addr: "127.0.0.1:0"}, prometheus.NewRegistry(), ready, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := ready.run(t.Context())["mcp"]; got != "ok" {
		t.Errorf("mcp serving: %q, want ok", got)
	}
	if err := m.close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := ready.run(t.Context())["mcp"]; got == "ok" {
		t.Error("mcp ready after it closed")
	}
}

// awaitReady (what `up` waits on before it says "ready") returns only once
// every check passes, expected ones included, and gives up with ctx.
func TestAwaitReady(t *testing.T) {
	ready := &readiness{}
	ready.expect("catalogue")
	var calls atomic.Int32
	ready.add("grpc", func(context.Context) error {
		if calls.Add(1) < 3 {
			return errors.New("not serving")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := awaitReady(ctx, ready, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the catalogue not started: %v, want the context's deadline", err)
	}
	ready.add("catalogue", func(context.Context) error { return nil })
	calls.Store(0)
	if err := awaitReady(t.Context(), ready, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n < 3 {
		t.Errorf("ready after %d checks of grpc, want 3", n)
	}
}

// TestUp_ReadyMeansServing watches /readyz while `lorekeeper up` starts:
// whenever it says ready, the gRPC and MCP listeners accept connections
// and the node has stored the catalogue the first resync published. (It
// once said ready with only NATS up.) The ports are fixed, in the range kept for this
// test, because /readyz is polled before startUp returns the addresses.
func TestUp_ReadyMeansServing(t *testing.T) {
	cfg := testUpConfig(t, t.TempDir())
	// The addresses are probed while startUp runs, so they are chosen
	// before it: free loopback ports, not fixed ones another run may hold.
	cfg.metricsAddr, cfg.node.grpcAddr, cfg.mcp.addr = loopbackAddr(t), loopbackAddr(t), loopbackAddr(t)
	started := make(chan *upStack, 1)
	go func() {
		st, err := startUp(t.Context(), cfg, testLogger(t))
		if err != nil {
			t.Errorf("startUp: %v", err)
		}
		started <- st
	}()
	var st *upStack
	received := false // whether started has been read: it is sent once
	defer func() {
		if !received {
			st = <-started
		}
		if st != nil {
			if err := st.close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}
	}()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(5 * time.Minute)
	for polls := 0; ; polls++ {
		if !received {
			select {
			case st = <-started:
				received = true
				if st == nil {
					return
				}
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 5 minutes (%d polls)", polls)
		}
		resp, err := hc.Get("http://" + cfg.metricsAddr + "/readyz")
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		var checks map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&checks)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, addr := range []string{cfg.node.grpcAddr, cfg.mcp.addr} {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatalf("/readyz said ready (%v) while %s refuses connections: %v", checks, addr, err)
			}
			c.Close()
		}
		if !received {
			st, received = <-started, true
			if st == nil {
				return
			}
		}
		n := streamMsgs(t, st.natsURL, st.dataDir)
		conn, client, err := dialQuery(cfg.node.grpcAddr, nil, testToken(t, st.dataDir, grpcToken))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		s, err := client.Status(ctx, &lkv1.StatusRequest{})
		cancel()
		conn.Close()
		if err != nil {
			t.Fatalf("/readyz said ready, Status: %v", err)
		}
		if s.GetEntities() < n {
			t.Errorf("/readyz said ready with %d entities stored of %d on the stream", s.GetEntities(), n)
		}
		if spells := snapshotSpells(t); n < uint64(spells) {
			t.Errorf("/readyz said ready with %d messages on the stream, before the resync published the v2 spells (%d)", n, spells)
		}
		return
	}
}

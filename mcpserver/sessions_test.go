package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestHTTPHandler_MaxSessions: a session beyond the bound closes the one
// idle longest, and only when every session has a call in flight is a new
// one refused, with a 503 that says what to do; concurrent initializations
// never overshoot the bound together.
func TestHTTPHandler_MaxSessions(t *testing.T) {
	const max = 3
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxSessions: max}))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"

	var open []*mcp.ClientSession
	for range max {
		cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
		mustOK(t, callTool(t, cs, "list_documents", nil))
		open = append(open, cs)
	}
	// The first session is now the one idle longest: a fourth closes it.
	if code, body := post(t, url, initBody, nil); code != http.StatusOK {
		t.Fatalf("initialize beyond %d idle sessions: %d %q, want 200", max, code, body)
	}
	if n := countSessions(h.srv); n != max {
		t.Errorf("%d sessions open, want %d", n, max)
	}
	for _, cs := range open[1:] {
		mustOK(t, callTool(t, cs, "list_documents", nil))
	}
	if _, err := open[0].CallTool(t.Context(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{}}); err == nil {
		t.Error("the session idle longest still answers: it was to be closed for the new one")
	}

	// Every session busy: refused, saying why and when to retry.
	var wg sync.WaitGroup
	busy := open[1:]
	busy = append(busy, connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}))
	before := h.fake.requests()
	release := h.fake.hold()
	for _, cs := range busy {
		wg.Go(func() {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{}})
		})
	}
	waitFor(t, func() bool { return h.fake.requests() >= before+len(busy) })
	code, body := post(t, url, initBody, nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "every one is in use") || !strings.Contains(body, "retry in") {
		t.Errorf("initialize with every session busy: %d %q, want 503 saying why and when to retry", code, body)
	}
	release()
	wg.Wait()

	// Many at once against a fresh server: never more than the bound.
	h2 := newServer(t)
	ts2 := httptest.NewServer(h2.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxSessions: max}))
	t.Cleanup(ts2.Close)
	var mu sync.Mutex
	codes := map[int]int{}
	for range 20 {
		wg.Go(func() {
			code, _ := post(t, ts2.URL+"/mcp", initBody, nil)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] < 1 || codes[http.StatusOK]+codes[http.StatusServiceUnavailable] != 20 {
		t.Errorf("20 concurrent initializations with a bound of %d: %v", max, codes)
	}
	if n := countSessions(h2.srv); n > max {
		t.Errorf("%d sessions open, more than the bound %d", n, max)
	}
}

// BenchmarkHTTPHandler_idleSessions measures what an idle stateful session
// costs: the live heap after opening N sessions (raw initialize requests,
// as a client that never comes back leaves them), per session.
func BenchmarkHTTPHandler_idleSessions(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var perSession float64
			for b.Loop() {
				h := newServer(b)
				ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxSessions: -1}))
				before := liveHeap()
				for range n {
					initSession(b, ts.URL+"/mcp")
				}
				after := liveHeap()
				if got := countSessions(h.srv); got != n {
					b.Fatalf("%d sessions open, want %d", got, n)
				}
				perSession = float64(after-before) / float64(n)
				h.srv.CloseSessions()
				ts.Close()
			}
			b.ReportMetric(perSession, "bytes/session")
			b.ReportMetric(perSession*float64(mcpserver.DefaultMaxSessions)/(1<<20), "MiB-at-default-bound")
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// initSession opens a session with a raw initialize request and leaves it.
func initSession(b *testing.B, url string) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(initBody))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("initialize: %s", resp.Status)
	}
}

// TestHTTPHandler_AbandonedSessionsLogQuietly: sessions whose clients left
// without closing them fail every resource-list notification until they
// expire; that is logged once, not once per session per change.
func TestHTTPHandler_AbandonedSessionsLogQuietly(t *testing.T) {
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(nil))
	t.Cleanup(ts.Close)
	const abandoned = 5
	for range abandoned {
		// An initialize and nothing more, as a client that never comes back.
		if code, body := post(t, ts.URL+"/mcp", initBody, nil); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.srv.WatchDocuments(ctx, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := range 3 {
		doc := &lkv1.Document{Key: fmt.Sprintf("brew-%d", i), Name: "Brew", Source: lkv1.Source_SOURCE_ORCBREW}
		h.fake.addEntity(&lkv1.Entity{Key: fmt.Sprintf("orcbrew:brew-%d:spell:zap", i), Slug: "zap", Name: "Zap", Kind: lkv1.Kind_KIND_SPELL, Document: doc,
			Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 1, School: "evocation"}}})
		time.Sleep(500 * time.Millisecond) // polled, then notified (debounced by the SDK)
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "level=WARN msg=\"calling notifications/"); n != 1 {
		t.Errorf("%d warnings about failed notifications for %d abandoned sessions, want one:\n%s", n, abandoned, logs)
	}
}

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/mcpserver"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	fake *fakeQuery
	srv  *mcpserver.Server
	reg  *prometheus.Registry
	logs *syncBuffer
	cs   *mcp.ClientSession
}

// newServer builds the MCP server over a gRPC client of a fresh fake query
// service.
func newServer(t testing.TB) *harness {
	t.Helper()
	h := &harness{fake: newFakeQuery(t), reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	h.srv = mcpserver.New(startQuery(t, h.fake), &mcpserver.Options{
		Logger:  slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: mcpserver.NewMetrics(h.reg),
		Version: "test",
	})
	return h
}

// newHarness connects the real SDK client over in-memory transports.
func newHarness(t testing.TB) *harness {
	t.Helper()
	h := newServer(t)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	h.cs = connect(t, ct)
	return h
}

func connect(t testing.TB, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "lorekeeper-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectHTTP serves h over httptest and connects the SDK's streamable
// HTTP client to it.
func connectHTTP(t testing.TB, handler http.Handler, token string) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	hc := ts.Client()
	if token != "" {
		hc = &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	}
	return connect(t, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, MaxRetries: -1})
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

func (h *harness) call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, h.cs, name, args)
}

// mustOK fails unless res is a success.
func mustOK(t testing.TB, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	if res.StructuredContent == nil {
		t.Fatalf("no structured content; text: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return out
}

// raw returns the structured content as generic JSON, to check which keys
// are present.
func raw(t testing.TB, res *mcp.CallToolResult) map[string]any {
	return decode[map[string]any](t, res)
}

func wantContains(t testing.TB, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

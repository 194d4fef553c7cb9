package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// queryNode is a real query service on a loopback port, counting the calls
// it answers.
type queryNode struct {
	addr  string
	srv   *grpc.Server
	hs    *health.Server
	calls atomic.Int64
}

// gracefulStop stops the node as a node role does: NOT_SERVING first, then
// a graceful stop.
func (n *queryNode) gracefulStop() {
	n.hs.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = query.Shutdown(ctx, n.srv)
}

// startQueryNodes serves store from n real query services.
func startQueryNodes(t testing.TB, store *badgerstore.Store, n int) []*queryNode {
	t.Helper()
	var nodes []*queryNode
	for range n {
		node := &queryNode{hs: health.NewServer()}
		count := grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			node.calls.Add(1)
			return h(ctx, req)
		})
		svc := query.NewService(store, nil, &query.Options{Version: "test"})
		node.srv = query.NewServer(svc, &query.ServerOptions{Health: node.hs, GRPCOptions: []grpc.ServerOption{count}})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		node.addr = ln.Addr().String()
		go func() { _ = node.srv.Serve(ln) }()
		t.Cleanup(node.srv.Stop)
		nodes = append(nodes, node)
	}
	return nodes
}

// snapshotStore stores the snapshot's entities of kinds (all when none)
// in a real Badger store, without vectors: these tests look names up.
func snapshotStore(t testing.TB, kinds ...lkv1.Kind) *badgerstore.Store {
	t.Helper()
	es, err := snapshotEntities()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: 4, Model: "none", Fields: badgerstore.PayloadFields()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := badgerstore.Open(t.TempDir(), idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var writes []badgerstore.Write
	for _, e := range es {
		if len(kinds) == 0 || slices.Contains(kinds, e.GetKind()) {
			writes = append(writes, badgerstore.Write{Entity: e})
		}
	}
	for i := 0; i < len(writes); i += 500 {
		if err := st.Apply(context.Background(), writes[i:min(i+500, len(writes))]); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// loadResult is what a run of MCP clients saw.
type loadResult struct {
	calls, errors int
	firstErrors   []string
	latencies     []time.Duration
}

// askSpell is mcpLoad's n-th question: lookup_spell of a well-known name.
func askSpell(n int) (string, map[string]any) {
	names := []string{"fireball", "cure wounds", "magic missile", "shield", "wish", "light"}
	return "lookup_spell", map[string]any{"name": names[n%len(names)]}
}

// mcpLoad runs clients MCP sessions against url, each asking ask(n) in a
// loop until ctx ends; midway, at stopAt, it calls stop once (if set).
func mcpLoad(t testing.TB, ctx context.Context, url string, clients int, ask func(n int) (string, map[string]any), stopAt time.Duration, stop func()) loadResult {
	t.Helper()
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	for i := range clients {
		c := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		defer cs.Close()
		wg.Go(func() {
			for n := i; ctx.Err() == nil; n++ {
				tool, args := ask(n)
				start := time.Now()
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				d := time.Since(start)
				if ctx.Err() != nil {
					return // the run ended during the call: not counted
				}
				mu.Lock()
				res.calls++
				res.latencies = append(res.latencies, d)
				if err != nil || r.IsError {
					res.errors++
					if len(res.firstErrors) < 5 {
						res.firstErrors = append(res.firstErrors, fmt.Sprint(tool, ": ", err, toolText(r)))
					}
				}
				mu.Unlock()
			}
		})
	}
	if stop != nil {
		time.AfterFunc(stopAt, stop)
	}
	wg.Wait()
	return res
}

func toolText(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestMCP_TwoQueryNodesOneStops: the MCP front end given two query nodes
// spreads calls over both, and when one stops under load no call fails
// beyond those it was answering: a node stopping gracefully says
// NOT_SERVING and finishes them (none fails); one that vanishes fails at
// most its calls in flight, one per client, and new calls go to the other.
func TestMCP_TwoQueryNodesOneStops(t *testing.T) {
	store := snapshotStore(t, lkv1.Kind_KIND_SPELL)
	const clients = 8
	for _, tt := range []struct {
		name      string
		stop      func(*queryNode)
		maxErrors int
	}{
		{"graceful", (*queryNode).gracefulStop, 0},
		{"abrupt", func(n *queryNode) { n.srv.Stop() }, clients},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nodes := startQueryNodes(t, store, 2)
			cfg := &mcpHTTPFlags{addr: "127.0.0.1:0"}
			m, err := startMCPHTTP(t.Context(), newSupervisor(t.Context(), testLogger(t)), nodes[0].addr+","+nodes[1].addr, nil, "", cfg, prometheus.NewRegistry(), nil, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer m.close(context.Background())

			ctx, cancel := context.WithTimeout(t.Context(), 6*time.Second)
			defer cancel()
			var before [2]int64
			res := mcpLoad(t, ctx, m.url, clients, askSpell, 3*time.Second, func() {
				before = [2]int64{nodes[0].calls.Load(), nodes[1].calls.Load()}
				tt.stop(nodes[0])
			})
			after := [2]int64{nodes[0].calls.Load(), nodes[1].calls.Load()}
			t.Logf("%d calls, %d errors; node 0 answered %d, node 1 %d before the stop and %d after", res.calls, res.errors, after[0], before[1], after[1]-before[1])
			if res.errors > tt.maxErrors {
				t.Errorf("%d of %d calls failed, want at most %d: %v", res.errors, res.calls, tt.maxErrors, res.firstErrors)
			}
			if before[0] == 0 || before[1] == 0 {
				t.Errorf("calls before the stop: node 0 %d, node 1 %d; want both used (round robin)", before[0], before[1])
			}
			if after[1] == before[1] {
				t.Error("node 1 answered nothing after node 0 stopped")
			}
			if res.calls < 10 {
				t.Errorf("only %d calls in 6 s", res.calls)
			}
		})
	}
}

// TestQueryTarget: --grpc-addr's forms.
func TestQueryTarget(t *testing.T) {
	tests := []struct {
		addr, want string
		wantErr    bool
	}{
		{"127.0.0.1:7411", "127.0.0.1:7411", false},
		{"dns:///query:7411", "dns:///query:7411", false},
		{"a:1, b:2", "lorekeeper-query:///a:1,b:2", false},
		{"a:1,b", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, _, err := queryTarget(tt.addr)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("queryTarget(%q) = %q, %v; want %q (error %v)", tt.addr, got, err, tt.want, tt.wantErr)
		}
	}
}

// BenchmarkMCP_TwoQueryNodes is the load test: 32 MCP clients calling
// lookup_spell over streamable HTTP through one MCP front end to two query
// nodes over the whole snapshot, for LOREKEEPER_LOAD_SECONDS (default 30);
// halfway through one node stops. It reports calls, errors, p50 and p99,
// and the process's peak RSS. Run with -benchtime 1x.
func BenchmarkMCP_TwoQueryNodes(b *testing.B) {
	secs := 30
	if s, err := strconv.Atoi(os.Getenv("LOREKEEPER_LOAD_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	for _, mode := range []string{"graceful", "abrupt"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				store := snapshotStore(b)
				nodes := startQueryNodes(b, store, 2)
				m, err := startMCPHTTP(context.Background(), newSupervisor(context.Background(), testLoggerB(b)), nodes[0].addr+","+nodes[1].addr, nil, "", &mcpHTTPFlags{addr: "127.0.0.1:0"}, prometheus.NewRegistry(), nil, testLoggerB(b))
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
				stop := nodes[0].gracefulStop
				if mode == "abrupt" {
					stop = nodes[0].srv.Stop
				}
				res := mcpLoad(b, ctx, m.url, 32, askSpell, time.Duration(secs)*time.Second/2, stop)
				cancel()
				_ = m.close(context.Background())
				slices.Sort(res.latencies)
				p := func(q float64) time.Duration { return res.latencies[int(q*float64(len(res.latencies)-1))] }
				b.ReportMetric(float64(res.calls), "calls")
				b.ReportMetric(float64(res.errors), "errors")
				b.ReportMetric(float64(p(0.5).Microseconds()), "p50-µs")
				b.ReportMetric(float64(p(0.99).Microseconds()), "p99-µs")
				b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
				if res.errors > 0 {
					b.Logf("errors: %v", res.firstErrors)
				}
			}
		})
	}
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func testLoggerB(testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

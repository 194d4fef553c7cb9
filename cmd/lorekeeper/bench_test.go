package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// benchNode is the query service over the whole snapshot, in process:
// real Badger in a temp dir, the embedded vector index, the real model for
// query texts, gRPC on loopback. Each entity's vector is a pseudo-random
// unit vector seeded by its key: ranking quality is not measured here, and
// embedding the catalogue would take minutes; the index does the same work.
type benchNode struct {
	svc    *query.Service
	client lkv1.QueryServiceClient
	conn   *grpc.ClientConn
	// queryTime is the duration of the last query service call, last
	// that call, to replay it.
	queryTime atomic.Int64
	last      atomic.Pointer[grpcCall]
}

type grpcCall struct {
	method     string
	req, reply proto.Message
}

// startBenchNode starts a node that b's cleanup stops (before b's temp
// dir goes: Badger must not outlive its directory).
func startBenchNode(b *testing.B) *benchNode {
	b.Helper()
	ctx := context.Background()
	es, err := open5e.SnapshotEntities(ctx)
	if err != nil {
		b.Fatal(err)
	}
	model, err := onnx.Open(testModelDir(b), &onnx.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = model.Close() })
	info := model.Info()
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = idx.Close() })
	st, err := badgerstore.Open(b.TempDir(), idx, &badgerstore.Options{Model: info.Name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	for i := 0; i < len(es); i += 256 {
		var ws []badgerstore.Write
		for _, e := range es[i:min(i+256, len(es))] {
			ws = append(ws, badgerstore.Write{Entity: e, Vector: pseudoVector(e.GetKey(), info.Dimensions)})
		}
		if err := st.Apply(ctx, ws); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.SetModel(ctx, info); err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	svc := query.NewService(st, model, nil)
	srv := query.NewServer(svc, nil)
	go func() { _ = srv.Serve(lis) }()
	b.Cleanup(srv.Stop)
	n := &benchNode{svc: svc}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			start := time.Now()
			err := invoker(ctx, method, req, reply, cc, opts...)
			n.queryTime.Store(int64(time.Since(start)))
			n.last.Store(&grpcCall{method, req.(proto.Message), reply.(proto.Message)})
			return err
		}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	n.client, n.conn = lkv1.NewQueryServiceClient(conn), conn
	return n
}

func pseudoVector(key string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// mcpCalls are the calls measured: one entity, ten full creature cards,
// a name pattern, semantic ranking (query vector cached after the first
// call) and the cross-kind search.
var mcpCalls = []struct {
	name string
	tool string
	args map[string]any
}{
	{"spell-name", "lookup_spell", map[string]any{"name": "fireball"}},
	{"creature-10-cards", "lookup_creature", map[string]any{"type": "undead", "cr_max": 5, "documents": []string{"srd-2014"}, "limit": 10}},
	{"equipment-pattern", "lookup_equipment", map[string]any{"name": "*sword*", "limit": 10}},
	{"spell-semantic", "lookup_spell", map[string]any{"semantic_query": "stop enemies from moving", "limit": 10}},
	{"search", "search_dnd_content", map[string]any{"query": "dragon breath", "limit": 5}},
}

// BenchmarkMCP measures the MCP layer over the in-process query service,
// for each call type: the tool call as the real SDK client sees it over
// in-memory transports (mcp), the tool handler on the server (handler:
// argument decoding and validation, the gRPC call, rendering, structured
// output), the query service call inside it (query), and the layer's
// overhead, handler minus query, per call. It reports p50 and p99 in
// microseconds, and allocations per call of the whole path and of a
// direct gRPC call of the same query.
func BenchmarkMCP(b *testing.B) {
	node := startBenchNode(b)
	srv := mcpserver.New(node.client, nil)
	var handlerTime atomic.Int64
	srv.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			res, err := next(ctx, method, req)
			if method == "tools/call" {
				handlerTime.Store(int64(time.Since(start)))
			}
			return res, err
		}
	})
	ctx := context.Background()
	cs := connectMCP(b, srv.MCP())
	for _, c := range mcpCalls {
		b.Run(c.name, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: c.tool, Arguments: c.args}
			call := func() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %v", c.tool, err, res)
				}
			}
			for range 10 { // warm up: caches, connections, the query vector
				call()
			}
			var e2e, handler, queryT, overhead []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				call()
				e2e = append(e2e, time.Since(start))
				h, q := time.Duration(handlerTime.Load()), time.Duration(node.queryTime.Load())
				handler = append(handler, h)
				queryT = append(queryT, q)
				overhead = append(overhead, h-q)
			}
			b.StopTimer()
			for _, m := range []struct {
				name string
				d    []time.Duration
			}{{"mcp", e2e}, {"handler", handler}, {"query", queryT}, {"overhead", overhead}} {
				p50, p99 := percentiles(m.d)
				b.ReportMetric(us(p50), m.name+"-p50-µs")
				b.ReportMetric(us(p99), m.name+"-p99-µs")
			}
			// The same query as a direct gRPC call, for its allocations:
			// the tool call's less these are the MCP layer's (both
			// sides of the in-memory transport).
			last := node.last.Load()
			direct := func() {
				reply := last.reply.ProtoReflect().New().Interface()
				if err := node.conn.Invoke(ctx, last.method, last.req, reply); err != nil {
					b.Fatal(err)
				}
			}
			mcpAllocs, queryAllocs := allocsPer(50, call), allocsPer(50, direct)
			b.ReportMetric(mcpAllocs, "mcp-allocs/call")
			b.ReportMetric(queryAllocs, "query-allocs/call")
			b.ReportMetric(mcpAllocs-queryAllocs, "layer-allocs/call")
		})
	}
}

// BenchmarkMCPFloorPayload is the floor for LoreKeeper's own answer: a
// trivial MCP Go SDK server whose tool, with lookup_spell's schemas,
// returns the result of lookup_spell(name="fireball") made once (three
// full cards, the text and the structured content), called as
// BenchmarkMCP calls the real tool. The difference from BenchmarkMCPFloor
// is what the SDK's two sides cost for a result of this size; the
// difference from BenchmarkMCP's spell-name is LoreKeeper's (the query and
// the rendering). Most of the payload's cost here is the Go SDK client's
// decoding; BenchmarkMCPHTTP measures the path with the TypeScript client
// an assistant is more likely to use.
func BenchmarkMCPFloorPayload(b *testing.B) {
	node := startBenchNode(b)
	ctx := context.Background()
	real := connectMCP(b, mcpserver.New(node.client, nil).MCP())
	args := map[string]any{"name": "fireball"}
	res, err := real.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("lookup_spell: %v %v", err, res)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	var tool *mcp.Tool
	for t, err := range real.Tools(ctx, nil) {
		if err != nil {
			b.Fatal(err)
		}
		if t.Name == "lookup_spell" {
			tool = t
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	srv.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: res.Content, StructuredContent: json.RawMessage(structured)}, nil
	})
	cs := connectMCP(b, srv)
	params := &mcp.CallToolParams{Name: "lookup_spell", Arguments: args}
	call := func() {
		if r, err := cs.CallTool(ctx, params); err != nil || r.IsError {
			b.Fatalf("%v %v", err, r)
		}
	}
	for range 10 {
		call()
	}
	timeCalls(b, call)
	b.ReportMetric(float64(len(structured)), "structured-bytes")
}

// BenchmarkMCPFloor is the protocol's floor on this machine: a trivial MCP
// Go SDK server answering a name lookup from a four-item list, called as
// BenchmarkMCP calls LoreKeeper's tools.
func BenchmarkMCPFloor(b *testing.B) {
	ctx := context.Background()
	cs := connectMCP(b, floorServer())
	params := &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"name": "fireball"}}
	call := func() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
	timeCalls(b, call)
	b.ReportMetric(allocsPer(50, call), "mcp-allocs/call")
}

// floorServer is the trivial MCP Go SDK server of the floor benchmarks:
// its one tool, lookup, answers a name from a four-item list.
func floorServer() *mcp.Server {
	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	items := map[string]string{"fireball": "A bright streak...", "shield": "An invisible barrier...", "light": "You touch one object...", "sleep": "This spell sends creatures..."}
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "Look a name up."}, func(_ context.Context, _ *mcp.CallToolRequest, x in) (*mcp.CallToolResult, out, error) {
		o := out{Name: x.Name, Text: items[x.Name]}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: o.Name + ": " + o.Text}}}, o, nil
	})
	return srv
}

// connectMCP connects an SDK client to srv over in-memory transports; b's
// cleanup closes both sides.
func connectMCP(b *testing.B, srv *mcp.Server) *mcp.ClientSession {
	b.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// timeCalls calls call b.N times and reports the p50 and p99 latency.
func timeCalls(b *testing.B, call func()) {
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		call()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(us(p50), "mcp-p50-µs")
	b.ReportMetric(us(p99), "mcp-p99-µs")
}

// allocsPer is the mean number of heap allocations of n calls of f.
func allocsPer(n int, f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*50/100], s[(len(s)-1)*99/100]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// floorEnv, set in a test binary's environment, makes it the floor
// server of BenchmarkMCPHTTP instead of running tests: it serves
// floorServer over streamable HTTP on loopback, prints its URL and serves
// until killed.
const floorEnv = "LOREKEEPER_BENCH_FLOOR_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(floorEnv) != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("http://%s/\n", ln.Addr())
		srv := floorServer()
		err = http.Serve(ln, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	findNode.close()
	os.Exit(code)
}

// startFloorProcess runs the floor server in a process of its own, as a
// trivial server would be, and returns its URL; b's cleanup stops it.
func startFloorProcess(b *testing.B) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), floorEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("floor server: %v", err)
	}
	return strings.TrimSpace(url)
}

// BenchmarkMCPHTTP measures the whole MCP path as an assistant sees it:
// the official TypeScript SDK client (testdata/tsclient, installed with
// npm ci on first use) over streamable HTTP on loopback, in the same
// rounds calling three servers: the floor server, in a process of its
// own, over the SDK's default streamable HTTP handler; LoreKeeper's HTTP
// endpoint as `lorekeeper up` serves it, calling the query service in
// process; and the same endpoint as the `lorekeeper mcp` role serves it,
// over loopback gRPC (call names ending in -grpc). It reports each call's
// p50 and p99 in microseconds, the name lookup's p50 over the floor's,
// and, for the name lookup, the p50 of the time inside each LoreKeeper
// server (from the request to the end of its answer) and of the query
// call inside that: the rest of the whole path is the client's and
// HTTP's. Without Node.js and npm it skips.
func BenchmarkMCPHTTP(b *testing.B) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node not found: the TypeScript SDK client needs Node.js")
	}
	client := tsClient(b)
	bn := startBenchNode(b)
	var inProcessTime atomic.Int64
	inProcess := lkv1.NewQueryServiceClient(&timedConn{query.NewInProcessConn(bn.svc, nil), &inProcessTime})
	servers := []*httpBenchServer{
		{name: "lorekeeper", handler: mcpserver.New(inProcess, nil).HTTPHandler(nil), queryTime: &inProcessTime},
		{name: "lorekeeper-grpc", handler: mcpserver.New(bn.client, nil).HTTPHandler(nil), queryTime: &bn.queryTime},
	}
	urls := map[string]string{"floor": startFloorProcess(b)}
	for _, s := range servers {
		urls[s.name] = s.start(b)
	}

	type call struct {
		Name   string         `json:"name"`
		Server string         `json:"server"`
		Tool   string         `json:"tool"`
		Args   map[string]any `json:"args"`
	}
	calls := []call{{"floor", "floor", "lookup", map[string]any{"name": "fireball"}}}
	for _, c := range mcpCalls {
		calls = append(calls, call{c.name, "lorekeeper", c.tool, c.args}, call{c.name + "-grpc", "lorekeeper-grpc", c.tool, c.args})
	}
	cfg, err := json.Marshal(map[string]any{"rounds": 300, "warmup": 20, "calls": calls, "servers": urls})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command(node, "bench.mjs", string(cfg))
		cmd.Dir = client
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("node bench.mjs: %v\n%s", err, stderr.Bytes())
		}
		var got map[string]struct{ P50, P99, Bytes float64 }
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatalf("node bench.mjs printed %q: %v", out, err)
		}
		for _, c := range calls {
			r := got[c.Name]
			b.ReportMetric(r.P50*1000, c.Name+"-p50-µs")
			b.ReportMetric(r.P99*1000, c.Name+"-p99-µs")
		}
		for _, name := range []string{"spell-name", "spell-name-grpc"} {
			b.ReportMetric((got[name].P50-got["floor"].P50)*1000, name+"-over-floor-p50-µs")
		}
		b.ReportMetric(got["spell-name"].Bytes, "spell-name-bytes")
		for _, s := range servers {
			s.report(b)
		}
	}
}

// httpBenchServer serves an MCP handler on loopback for BenchmarkMCPHTTP
// and times its name lookups (a tools/call naming fireball): the whole
// request, and the query call inside it when queryTime is set.
type httpBenchServer struct {
	name      string
	handler   http.Handler
	queryTime *atomic.Int64 // the last query call's duration

	mu            sync.Mutex
	server, query []time.Duration
}

func (s *httpBenchServer) start(b *testing.B) (url string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		start := time.Now()
		s.handler.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"fireball"`)) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.server = append(s.server, time.Since(start))
			if s.queryTime != nil {
				s.query = append(s.query, time.Duration(s.queryTime.Load()))
			}
		}
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// report reports the name lookup's p50s since the last report.
func (s *httpBenchServer) report(b *testing.B) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p50, _ := percentiles(s.server)
	b.ReportMetric(us(p50), s.name+"-server-p50-µs")
	if s.queryTime != nil {
		p50, _ = percentiles(s.query)
		b.ReportMetric(us(p50), s.name+"-query-p50-µs")
	}
	s.server, s.query = nil, nil
}

// timedConn keeps the duration of its last call.
type timedConn struct {
	grpc.ClientConnInterface
	last *atomic.Int64
}

func (c *timedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	start := time.Now()
	err := c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
	c.last.Store(int64(time.Since(start)))
	return err
}

package mcpserver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// BenchmarkToolCallOverhead measures the MCP front end's overhead: the same
// lookup as a tool call over streamable HTTP (loopback TCP, the real SDK
// client) and as a direct gRPC call to the same query service, interleaved.
// It reports p50 and p99 of each and their difference, in microseconds.
func BenchmarkToolCallOverhead(b *testing.B) {
	queries := []struct {
		name string
		tool string
		args map[string]any
		grpc func(context.Context, lkv1.QueryServiceClient) error
	}{
		{"spell", "lookup_spell", map[string]any{"name": "fireball"}, func(ctx context.Context, c lkv1.QueryServiceClient) error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "fireball", Limit: 20}})
			return err
		}},
		{"creature", "lookup_creature", map[string]any{"name": "adult red dragon"}, func(ctx context.Context, c lkv1.QueryServiceClient) error {
			_, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "adult red dragon", Limit: 20}})
			return err
		}},
	}
	for _, mode := range []struct {
		name string
		opts *mcpserver.HTTPOptions
	}{
		{"http-stateful", nil},
		{"http-stateless", &mcpserver.HTTPOptions{Stateless: true}},
		{"inmemory", nil}, // no HTTP: the MCP layer alone, for comparison
	} {
		for _, q := range queries {
			b.Run(mode.name+"/"+q.name, func(b *testing.B) {
				fake := newFakeQuery(b)
				client := startQuery(b, fake)
				srv := mcpserver.New(client, nil)
				var cs *mcp.ClientSession
				if mode.name == "inmemory" {
					ct, st := mcp.NewInMemoryTransports()
					ss, err := srv.MCP().Connect(context.Background(), st, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { ss.Close() })
					cs = connect(b, ct)
				} else {
					cs = connectHTTP(b, srv.HTTPHandler(mode.opts), "")
				}
				ctx := context.Background()
				params := &mcp.CallToolParams{Name: q.tool, Arguments: q.args}
				// Warm up both paths.
				for range 20 {
					if err := q.grpc(ctx, client); err != nil {
						b.Fatal(err)
					}
					if _, err := cs.CallTool(ctx, params); err != nil {
						b.Fatal(err)
					}
				}
				direct := make([]time.Duration, 0, b.N)
				viaMCP := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for b.Loop() {
					t0 := time.Now()
					if err := q.grpc(ctx, client); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					res, err := cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatalf("%v %v", err, res)
					}
					t2 := time.Now()
					direct = append(direct, t1.Sub(t0))
					viaMCP = append(viaMCP, t2.Sub(t1))
				}
				b.StopTimer()
				g50, g99 := percentiles(direct)
				m50, m99 := percentiles(viaMCP)
				b.ReportMetric(us(g50), "grpc-p50-µs")
				b.ReportMetric(us(g99), "grpc-p99-µs")
				b.ReportMetric(us(m50), "mcp-p50-µs")
				b.ReportMetric(us(m99), "mcp-p99-µs")
				b.ReportMetric(us(m50-g50), "overhead-p50-µs")
				b.ReportMetric(us(m99-g99), "overhead-p99-µs")
			})
		}
	}
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*99/100)]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

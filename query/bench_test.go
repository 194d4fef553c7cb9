package query_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// loopback serves the snapshot on a real TCP loopback listener.
func loopback(b *testing.B) lkv1.QueryServiceClient {
	b.Helper()
	st := snapshotStore(b)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := query.NewServer(query.NewService(st, snap.emb, nil), nil)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return lkv1.NewQueryServiceClient(conn)
}

type benchCall func(ctx context.Context, c lkv1.QueryServiceClient) error

var benchCalls = []struct {
	name       string
	structured bool
	call       benchCall
}{
	{"name", true, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "fireball", Limit: 5}})
		return err
	}},
	// Nothing matches the name: did-you-mean over the whole snapshot.
	{"name-miss-suggest", true, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "firebal", Limit: 5}})
		if err == nil && len(resp.GetSuggestions()) == 0 {
			err = errors.New("no suggestions for firebal")
		}
		return err
	}},
	{"name-miss-suggest-multiword", true, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "ancient red dragn", Limit: 5}})
		if err == nil && len(resp.GetSuggestions()) == 0 {
			err = errors.New("no suggestions for ancient red dragn")
		}
		return err
	}},
	{"name-alias", true, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "Tasha's Hideous Laughter", Limit: 5}})
		if err == nil && len(resp.GetResults()) == 0 {
			err = errors.New("no result for the alias")
		}
		return err
	}},
	{"filtered", true, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Limit: 5, Documents: docs("srd-5e")},
			Types: []string{"undead"}, CrRange: &lkv1.DoubleRange{Max: proto.Float64(5)}})
		return err
	}},
	{"semantic", false, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "stop enemies from moving", Limit: 5}})
		return err
	}},
	// A question whose words carry filters (level, class, damage type):
	// read and ranked by them, on top of "semantic"'s work.
	{"semantic-understood", false, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "3rd-level wizard spell that deals fire damage", Limit: 5}})
		if err == nil && len(resp.GetUnderstood().GetFilters()) != 3 {
			err = fmt.Errorf("understood %v, want level, class and damage type", resp.GetUnderstood())
		}
		return err
	}},
	{"search", false, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.Search(ctx, &lkv1.SearchRequest{Query: "fire breathing monster", Limit: 3})
		return err
	}},
	// New query texts every time: the model runs on each call.
	{"semantic-uncached", false, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: fresh("stop enemies from moving"), Limit: 5}})
		return err
	}},
	{"search-uncached", false, func(ctx context.Context, c lkv1.QueryServiceClient) error {
		_, err := c.Search(ctx, &lkv1.SearchRequest{Query: fresh("fire breathing monster"), Limit: 3})
		return err
	}},
}

var freshN atomic.Int64

// fresh makes q a query text not seen before (the query-vector cache
// misses).
func fresh(q string) string { return q + " " + strconv.FormatInt(freshN.Add(1), 36) }

// BenchmarkQuery reports p50 and p99 latency at concurrency 1 through a
// gRPC client on loopback, over the whole snapshot.
func BenchmarkQuery(b *testing.B) {
	c := loopback(b)
	ctx := context.Background()
	for _, bc := range benchCalls {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				if err := bc.call(ctx, c); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkQueryParallel reports throughput with 32 concurrent callers.
func BenchmarkQueryParallel(b *testing.B) {
	c := loopback(b)
	ctx := context.Background()
	for _, bc := range benchCalls {
		b.Run(bc.name, func(b *testing.B) {
			const workers = 32
			var wg sync.WaitGroup
			per := b.N/workers + 1
			start := time.Now()
			b.ResetTimer()
			for range workers {
				wg.Go(func() {
					for range per {
						if err := bc.call(ctx, c); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(per*workers)/time.Since(start).Seconds(), "req/s")
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), "p50-µs")
	b.ReportMetric(p(0.99), "p99-µs")
}

// BenchmarkStore reports how long the whole snapshot takes to apply (with
// vectors, synced) and to load again at Open into a fresh embedded index.
func BenchmarkStore(b *testing.B) {
	st := snapshotStore(b)
	ctx := context.Background()
	model := st.Model().Name
	vecs := make([][]float32, len(snap.entities))
	for i, e := range snap.entities {
		v, _, err := st.CachedVector(ctx, model, e.GetContentHash())
		if err != nil {
			b.Fatal(err)
		}
		vecs[i] = v
	}
	for b.Loop() {
		dir := b.TempDir()
		idx := mustIndex(b, st.Model().Dimensions)
		s, err := badgerstore.Open(dir, idx, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for i := 0; i < len(snap.entities); i += 256 {
			var ws []badgerstore.Write
			for j := i; j < min(i+256, len(snap.entities)); j++ {
				ws = append(ws, badgerstore.Write{Entity: snap.entities[j], Vector: vecs[j]})
			}
			if err := s.Apply(ctx, ws); err != nil {
				b.Fatal(err)
			}
		}
		applied := time.Since(start)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		idx2 := mustIndex(b, st.Model().Dimensions)
		start = time.Now()
		s, err = badgerstore.Open(dir, idx2, nil)
		if err != nil {
			b.Fatal(err)
		}
		opened := time.Since(start)
		n, _ := idx2.Count(ctx)
		if got := s.Stats().Entities; got != len(snap.entities) || n != got {
			b.Fatalf("reopened with %d entities, %d points; want %d", got, n, len(snap.entities))
		}
		_ = s.Close()
		b.ReportMetric(float64(applied.Milliseconds()), "apply-ms")
		b.ReportMetric(float64(len(snap.entities))/applied.Seconds(), "entities/s")
		b.ReportMetric(float64(opened.Milliseconds()), "open-ms")
	}
}

func mustIndex(b *testing.B, dims int) *vectorindex.Index {
	b.Helper()
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: dims, Fields: badgerstore.PayloadFields()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = idx.Close() })
	return idx
}

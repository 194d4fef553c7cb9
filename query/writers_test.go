package query_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// gatedIndex is the embedded vector index with a Search that waits first:
// until release is closed (when set), then delay, which stands for a
// remote backend's round trip. entered receives (without blocking) each
// time a Search starts.
type gatedIndex struct {
	driver.Index
	delay   time.Duration
	entered chan struct{}
	release chan struct{}
}

func (g *gatedIndex) Search(ctx context.Context, vector []float32, f *driver.Filter, limit int) ([]driver.Hit, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	if g.release != nil {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if g.delay > 0 {
		t := time.NewTimer(g.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	return g.Index.Search(ctx, vector, f, limit)
}

// gatedStore is a store over g holding the SRD 5.1 spells with their real
// vectors, and one of its writes (a spell with its vector) to apply again.
func gatedStore(tb testing.TB, g *gatedIndex) (*badgerstore.Store, badgerstore.Write) {
	tb.Helper()
	snapshotStore(tb) // the model, the entities and their cached vectors
	info := snap.store.Model()
	g.Index = embeddedindex.New(info.Dimensions)
	idx := vectorindex.New(g, &vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	tb.Cleanup(func() { _ = idx.Close() })
	st, ws := srdSpellStore(tb, idx)
	return st, ws[0]
}

// srdSpellStore opens a store over idx holding the SRD 5.1 spells with
// their real vectors (cached by the snapshot load), and returns the writes
// it applied.
func srdSpellStore(tb testing.TB, idx *vectorindex.Index) (*badgerstore.Store, []badgerstore.Write) {
	tb.Helper()
	ctx := context.Background()
	info := snap.store.Model()
	st, err := badgerstore.Open(tb.TempDir(), idx, &badgerstore.Options{Model: info.Name})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	var ws []badgerstore.Write
	for _, e := range snap.entities {
		if e.GetKind() != lkv1.Kind_KIND_SPELL || e.GetDocument().GetKey() != "srd-2014" {
			continue
		}
		v, ok, err := snap.store.CachedVector(ctx, info.Name, e.GetContentHash())
		if err != nil || !ok {
			tb.Fatalf("no cached vector for %s: %v", e.GetKey(), err)
		}
		ws = append(ws, badgerstore.Write{Entity: e, Vector: v})
	}
	if err := st.Apply(ctx, ws); err != nil {
		tb.Fatal(err)
	}
	if err := st.SetModel(ctx, info); err != nil {
		tb.Fatal(err)
	}
	return st, ws
}

// semanticCalls are the two calls that search the vector index.
var semanticCalls = []struct {
	name string
	call func(ctx context.Context, svc *query.Service) (lkv1.Ranking, int, error)
}{
	{"lookup", func(ctx context.Context, svc *query.Service) (lkv1.Ranking, int, error) {
		r, err := svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "restore health and cure wounds", Limit: 5}})
		return r.GetRanking(), len(r.GetResults()), err
	}},
	{"search", func(ctx context.Context, svc *query.Service) (lkv1.Ranking, int, error) {
		r, err := svc.Search(ctx, &lkv1.SearchRequest{Query: "restore health and cure wounds", Limit: 5})
		return r.GetRanking(), len(r.GetGroups()), err
	}},
}

// TestSemantic_WritersDoNotWaitForTheVectorIndex: while a semantic query
// is inside the vector index (which for Qdrant is a network call of up to
// the semantic timeout), a write to the store completes.
func TestSemantic_WritersDoNotWaitForTheVectorIndex(t *testing.T) {
	for _, c := range semanticCalls {
		t.Run(c.name, func(t *testing.T) {
			g := &gatedIndex{entered: make(chan struct{}, 1), release: make(chan struct{})}
			st, w := gatedStore(t, g)
			svc := query.NewService(st, snap.emb, &query.Options{SemanticTimeout: time.Minute})
			type result struct {
				ranking lkv1.Ranking
				n       int
				err     error
			}
			queried := make(chan result, 1)
			go func() {
				r, n, err := c.call(t.Context(), svc)
				queried <- result{r, n, err}
			}()
			<-g.entered
			applied := make(chan error, 1)
			go func() { applied <- st.Apply(t.Context(), []badgerstore.Write{w}) }()
			// Not a timing assertion: a writer that waits for the
			// search waits until it is released, which is never before
			// this bound.
			waited := false
			select {
			case err := <-applied:
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
			case <-time.After(20 * time.Second):
				waited = true
				t.Error("a write waited for a semantic query's vector index call")
			}
			close(g.release)
			r := <-queried
			if r.err != nil || r.ranking != lkv1.Ranking_RANKING_HYBRID || r.n == 0 {
				t.Errorf("query: ranking %v, %d results, err %v; want hybrid results", r.ranking, r.n, r.err)
			}
			if waited {
				if err := <-applied; err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
		})
	}
}

// BenchmarkWriterDuringSemantic reports how long a write (one entity,
// synced) takes while four callers run semantic lookups back to back,
// with the vector index answering at once (embedded) or after 2 ms (a
// remote index's round trip).
func BenchmarkWriterDuringSemantic(b *testing.B) {
	for _, delay := range []time.Duration{0, 2 * time.Millisecond} {
		name := "embedded"
		if delay > 0 {
			name = "remote-" + delay.String()
		}
		b.Run(name, func(b *testing.B) {
			g := &gatedIndex{delay: delay}
			st, w := gatedStore(b, g)
			svc := query.NewService(st, snap.emb, &query.Options{SemanticTimeout: time.Minute})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var reads atomic.Int64
			for range 4 {
				wg.Go(func() {
					for ctx.Err() == nil {
						if _, _, err := semanticCalls[0].call(ctx, svc); err != nil && ctx.Err() == nil {
							b.Error(err)
							return
						}
						reads.Add(1)
					}
				})
			}
			lat := make([]time.Duration, 0, b.N)
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				if err := st.Apply(ctx, []badgerstore.Write{w}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			elapsed := time.Since(start)
			cancel()
			wg.Wait()
			reportPercentiles(b, lat)
			b.ReportMetric(float64(reads.Load())/elapsed.Seconds(), "reads/s")
		})
	}
}

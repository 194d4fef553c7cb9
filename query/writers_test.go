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

// gatedIndex is the embedded vector index with a Search and Scores that
// wait first: until release is closed (when set), then delay, which
// stands for a remote backend's round trip. entered receives (without
// blocking) each time a call starts. With late, Scores waits after
// scoring instead, so that its answer predates the writes made meanwhile.
type gatedIndex struct {
	driver.Index
	delay   time.Duration
	entered chan struct{}
	release chan struct{}
	late    bool
}

func (g *gatedIndex) wait(ctx context.Context) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	if g.release != nil {
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if g.delay > 0 {
		t := time.NewTimer(g.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return nil
}

func (g *gatedIndex) Search(ctx context.Context, vector []float32, f *driver.Filter, limit int) ([]driver.Hit, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.Index.Search(ctx, vector, f, limit)
}

func (g *gatedIndex) Scores(ctx context.Context, vector []float32, ids []string, out []float32) error {
	if !g.late {
		if err := g.wait(ctx); err != nil {
			return err
		}
	}
	if err := g.Index.(driver.Scorer).Scores(ctx, vector, ids, out); err != nil {
		return err
	}
	if g.late {
		return g.wait(ctx)
	}
	return nil
}

// gatedStore is a store over g holding the SRD 5.1 spells with their real
// vectors, and the writes (a spell with its vector each) it applied.
func gatedStore(tb testing.TB, g *gatedIndex) (*badgerstore.Store, []badgerstore.Write) {
	tb.Helper()
	snapshotStore(tb) // the model, the entities and their cached vectors
	info := snap.store.Model()
	g.Index = embeddedindex.New(info.Dimensions)
	idx := vectorindex.New(g, &vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	tb.Cleanup(func() { _ = idx.Close() })
	return srdSpellStore(tb, idx)
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
			st, ws := gatedStore(t, g)
			w := ws[0]
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

// TestSemantic_SlotReusedDuringSearch: an entity deleted just after the
// vector index scored it gives its slot to an entity written at the same
// time; the newcomer must not inherit the similarity scored for the
// entity it replaced (it would rank among the best; with none it is last).
func TestSemantic_SlotReusedDuringSearch(t *testing.T) {
	g := &gatedIndex{entered: make(chan struct{}, 1), release: make(chan struct{}), late: true}
	st, ws := gatedStore(t, g)
	var cure badgerstore.Write
	for _, w := range ws {
		if w.Entity.GetName() == "Cure Wounds" {
			cure = w
		}
	}
	// No text of its own: only a stolen similarity could rank it.
	newcomer := &lkv1.Entity{Key: "test:srd-2014:spell:qwzx", Slug: "qwzx", Name: "Qwzx", Kind: lkv1.Kind_KIND_SPELL,
		Document: cure.Entity.GetDocument(), Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{}}}
	before := slotOf(t, st, cure.Entity.GetKey())
	svc := query.NewService(st, snap.emb, &query.Options{SemanticTimeout: time.Minute})
	type result struct {
		resp *lkv1.LookupResponse
		err  error
	}
	queried := make(chan result, 1)
	go func() {
		r, err := svc.LookupSpells(t.Context(), &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "restore health and cure wounds", Limit: 100}})
		queried <- result{r, err}
	}()
	<-g.entered
	if err := st.Apply(t.Context(), []badgerstore.Write{{DeleteKey: cure.Entity.GetKey()}, {Entity: newcomer, Vector: cure.Vector}}); err != nil {
		t.Fatal(err)
	}
	if after := slotOf(t, st, newcomer.GetKey()); after != before {
		t.Fatalf("the newcomer has slot %d, Cure Wounds had %d: the test needs the slot reused", after, before)
	}
	close(g.release)
	r := <-queried
	got := names(r.resp.GetResults())
	if r.err != nil || r.resp.GetRanking() != lkv1.Ranking_RANKING_HYBRID || len(got) != 100 {
		t.Fatalf("lookup: ranking %v, %d results, err %v; want 100 hybrid results", r.resp.GetRanking(), len(got), r.err)
	}
	if indexOf(got, "Qwzx") >= 0 || indexOf(got, "Cure Wounds") >= 0 {
		t.Errorf("results %v: the newcomer took the deleted Cure Wounds's similarity, or Cure Wounds came back", got)
	}
}

func slotOf(tb testing.TB, st *badgerstore.Store, key string) uint32 {
	tb.Helper()
	var slot uint32
	var ok bool
	_ = st.View(tb.Context(), func(v *badgerstore.View) error {
		slot, ok = v.Slot(key)
		return nil
	})
	if !ok {
		tb.Fatalf("no slot for %s", key)
	}
	return slot
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
			st, ws := gatedStore(b, g)
			w := ws[0]
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

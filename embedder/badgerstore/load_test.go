package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/badgerstore/storetest"
	"lorekeeper.dev/embedder/relevance"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// gatedUpserts is the embedded index whose Upsert waits until release is
// closed: a reload of the vectors that takes as long as the test says.
type gatedUpserts struct {
	driver.Index
	release chan struct{}
}

func (g *gatedUpserts) Upsert(ctx context.Context, ps []driver.Point) error {
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Index.Upsert(ctx, ps)
}

func gatedIndex(t *testing.T) (*vectorindex.Index, chan struct{}) {
	g := &gatedUpserts{Index: embeddedindex.New(3), release: make(chan struct{})}
	idx := vectorindex.New(g, &vectorindex.Options{Dimensions: 3, Fields: badgerstore.PayloadFields()})
	t.Cleanup(func() { _ = idx.Close() })
	return idx, g.release
}

// TestOpen_LoadInBackground: with LoadInBackground, Open returns while the
// index is still being built; meanwhile Ready says it is loading
// (ErrLoading) and how far, a view waits for it within its deadline (and
// says it is loading past that), Stats counts what Badger holds, and a
// write waits; once built, everything is there and the write is applied.
// Closing a store that is still loading stops the load.
func TestOpen_LoadInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 50
	fillStore(t, dir, n)

	idx, release := gatedIndex(t)
	s, err := badgerstore.Open(dir, idx, &badgerstore.Options{LoadInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Ready(ctx); !errors.Is(err, badgerstore.ErrLoading) {
		t.Errorf("Ready while loading: %v, want ErrLoading", err)
	} else {
		t.Logf("Ready while loading: %v", err)
	}
	if got := s.Stats().Entities; got != n {
		t.Errorf("Stats while loading: %d entities, want the %d stored", got, n)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := s.View(short, func(*badgerstore.View) error { return nil }); !errors.Is(err, badgerstore.ErrLoading) {
		t.Errorf("View while loading (waiting at most 200 ms): %v, want ErrLoading", err)
	}
	// A view with time to wait gets its answer once the index is built.
	viewed := make(chan error, 1)
	go func() {
		viewed <- s.View(ctx, func(v *badgerstore.View) error {
			// n, or n+1 if the waiting write went first.
			if got := v.DocCount(); got < n {
				return fmt.Errorf("the view waiting for the load sees %d entities, want the %d stored", got, n)
			}
			return nil
		})
	}()
	applied := make(chan error, 1)
	go func() {
		applied <- s.Apply(ctx, []badgerstore.Write{{Entity: spell("late", "Late", 2, "abjuration", ""), Sequence: n + 1}})
	}()
	select {
	case err := <-applied:
		t.Fatalf("Apply while loading returned %v before the load ended", err)
	case err := <-viewed:
		t.Fatalf("View while loading returned %v before the load ended", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-viewed; err != nil {
		t.Error(err)
	}
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after the load: %v", err)
	}
	got := keys(t, s, func(v *badgerstore.View) badgerstore.Set {
		return v.Postings(badgerstore.FieldKind, lkv1.Kind_KIND_SPELL.Slug())
	})
	if len(got) != n+1 {
		t.Errorf("%d spells after the load and the write, want %d", len(got), n+1)
	}
	if c, err := idx.Count(ctx); err != nil || c != n {
		t.Errorf("vector index holds %d points (%v), want the %d stored", c, err, n)
	}
	if m := s.Mark(); m.Entities != n+1 || m.Sequence != n+1 {
		t.Errorf("mark after the write %+v, want %d entities up to sequence %d", m, n+1, n+1)
	}

	// Closing while loading waits for the load to stop, then closes.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	idx2, release2 := gatedIndex(t)
	s2, err := badgerstore.Open(dir, idx2, &badgerstore.Options{LoadInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s2.Close() }()
	time.Sleep(50 * time.Millisecond)
	close(release2) // the gated flush returns; the load sees the close
	if err := <-closed; err != nil {
		t.Errorf("Close while loading: %v", err)
	}
}

// TestOpen_LoadInBackgroundFindsDamage: an entity that cannot be read,
// found by the background load after Open returned, is ErrDamaged from
// LoadErr, Ready, View and Apply, never a partial index; ReplaceDamaged
// sets the store aside (through the caller's function) and leaves an
// empty, usable store under the same *Store, with an empty vector index
// and the model kept. Opened without LoadInBackground, the same store is
// refused at Open, as before.
func TestOpen_LoadInBackgroundFindsDamage(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	const n = 300
	fillStore(t, dir, n)
	storetest.DamageEntity(t, dir)

	if s, err := badgerstore.Open(dir, newIndex(t), nil); !errors.Is(err, badgerstore.ErrDamaged) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open in the foreground: %v, want ErrDamaged", err)
	}

	idx := newIndex(t)
	s, err := badgerstore.Open(dir, idx, &badgerstore.Options{LoadInBackground: true, Model: "m1"})
	if err != nil {
		t.Fatalf("Open: %v (the damage is the load's to find)", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	<-s.Loaded()
	if err := s.LoadErr(); !errors.Is(err, badgerstore.ErrDamaged) {
		t.Fatalf("LoadErr: %v, want ErrDamaged", err)
	}
	t.Logf("LoadErr: %v", s.LoadErr())
	for what, err := range map[string]error{
		"Ready": s.Ready(ctx),
		"View":  s.View(ctx, func(*badgerstore.View) error { return nil }),
		"Apply": s.Apply(ctx, []badgerstore.Write{{Entity: spell("late", "Late", 2, "abjuration", "")}}),
	} {
		if !errors.Is(err, badgerstore.ErrDamaged) {
			t.Errorf("%s after the damage was found: %v, want ErrDamaged", what, err)
		}
	}

	aside := dir + ".aside"
	if err := s.ReplaceDamaged(ctx, func() error { return os.Rename(dir, aside) }); err != nil {
		t.Fatalf("ReplaceDamaged: %v", err)
	}
	if _, err := os.Stat(aside); err != nil {
		t.Errorf("the damaged store was not set aside: %v", err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after ReplaceDamaged: %v", err)
	}
	if st := s.Stats(); st.Entities != 0 {
		t.Errorf("the new store holds %d entities, want none", st.Entities)
	}
	if c, err := idx.Count(ctx); err != nil || c != 0 {
		t.Errorf("the vector index holds %d points (%v) after ReplaceDamaged, want none", c, err)
	}
	if m := s.Model(); m.Name != "m1" {
		t.Errorf("model after ReplaceDamaged %q, want m1", m.Name)
	}
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: spell("late", "Late", 2, "abjuration", ""), Vector: []float32{1, 0, 0}, Sequence: 7}}); err != nil {
		t.Fatalf("Apply to the new store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What was written after the replacement is in the directory.
	s2 := openStore(t, dir, nil)
	if st, m := s2.Stats(), s2.Mark(); st.Entities != 1 || m.Sequence != 7 || m.Entities != 1 {
		t.Errorf("reopened: %d entities, mark %+v; want the 1 written, sequence 7", st.Entities, m)
	}
	if m := s2.Model(); m.Name != "m1" {
		t.Errorf("reopened: model %q, want m1", m.Name)
	}
}

// TestOpen_LoadMatchesWrites stores every third entity of the Open5e
// snapshot (every kind and book; most with a vector, some without; a few
// deleted and written again)
// and reopens it: the index the load builds (entities prepared in
// parallel, vectors read by a walk beside the documents) holds what the
// index built by the writes holds, compared by entity key: every posting
// of every (field, value), every BM25 term's postings and each entity's
// length, the name order, the documents' counts, the kinds and the vectors
// (in the vector index too).
func TestOpen_LoadMatchesWrites(t *testing.T) {
	ctx := t.Context()
	all, err := open5e.SnapshotEntities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var es []*lkv1.Entity
	for i := 0; i < len(all); i += 3 {
		es = append(es, all[i])
	}
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, newIndex(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ws []badgerstore.Write
	vectors := 0
	for i, e := range es {
		w := badgerstore.Write{Entity: e, Sequence: uint64(i + 1)}
		if i%7 != 0 {
			w.Vector = []float32{float32(i), 1, 0}
			vectors++
		}
		ws = append(ws, w)
	}
	for i := 0; i < len(ws); i += 500 {
		if err := s.Apply(ctx, ws[i:min(i+500, len(ws))]); err != nil {
			t.Fatal(err)
		}
	}
	// A few deleted and written again: their slots differ from key order.
	var again []badgerstore.Write
	for i := 0; i < len(es); i += 31 {
		again = append(again, badgerstore.Write{DeleteKey: es[i].GetKey()})
	}
	for i := 0; i < len(es); i += 31 {
		again = append(again, ws[i])
	}
	if err := s.Apply(ctx, again); err != nil {
		t.Fatal(err)
	}
	written := dumpIndex(t, s, es)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	idx := newIndex(t)
	s, err = badgerstore.Open(dir, idx, &badgerstore.Options{LoadInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	<-s.Loaded()
	if err := s.LoadErr(); err != nil {
		t.Fatal(err)
	}
	loaded := dumpIndex(t, s, es)
	if len(written) != len(loaded) {
		t.Errorf("the written index dumps %d lines, the loaded one %d", len(written), len(loaded))
	}
	diffs := 0
	for i := range min(len(written), len(loaded)) {
		if written[i] != loaded[i] && diffs < 10 {
			t.Errorf("line %d: written %.300q, loaded %.300q", i, written[i], loaded[i])
			diffs++
		}
	}
	if st := s.Stats(); st.Vectors != vectors || st.Entities != len(es) {
		t.Errorf("loaded: %d entities, %d vectors; want %d, %d", st.Entities, st.Vectors, len(es), vectors)
	}
	if n, err := idx.Count(ctx); err != nil || n != vectors {
		t.Errorf("vector index holds %d points (%v), want %d", n, err, vectors)
	}
	// And what the index holds of an entity's terms is its terms: each
	// with its count, the length their sum (every 10th entity).
	err = s.View(ctx, func(v *badgerstore.View) error {
		for i := 0; i < len(es); i += 10 {
			e := es[i]
			slot, _ := v.Slot(e.GetKey())
			want := map[string]int{}
			toks := relevance.Terms(e)
			for _, tok := range toks {
				want[tok]++
			}
			if got := v.DocLen(slot); got != relevance.DocLen(toks) {
				t.Errorf("%s: length %d, want %d", e.GetKey(), got, relevance.DocLen(toks))
			}
			for term, n := range want {
				i := slices.IndexFunc(v.TermPostings(term), func(p relevance.Posting) bool { return p.Slot == slot })
				if i < 0 || int(v.TermPostings(term)[i].TF) != n {
					t.Errorf("%s: term %q not indexed %d times", e.GetKey(), term, n)
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d entities, %d lines of index compared", len(es), len(loaded))
}

// dumpIndex writes what the store's index holds as sorted lines naming
// entities by key, not slot.
func dumpIndex(t *testing.T, s *badgerstore.Store, es []*lkv1.Entity) []string {
	t.Helper()
	var out []string
	err := s.View(t.Context(), func(v *badgerstore.View) error {
		keysOf := func(set badgerstore.Set) string {
			var ks []string
			set.Each(func(slot uint32) bool {
				ks = append(ks, v.Key(slot))
				return true
			})
			slices.Sort(ks)
			return strings.Join(ks, ",")
		}
		seen := map[string]bool{}
		for _, e := range es {
			f := badgerstore.EntityFields(e)
			for field, vals := range f.Keywords {
				for _, val := range vals {
					if k := field + "=" + val; !seen[k] {
						seen[k] = true
						out = append(out, "posting "+k+": "+keysOf(v.Postings(field, val)))
					}
				}
			}
			slot, ok := v.Slot(e.GetKey())
			if !ok {
				return fmt.Errorf("%s is not in the index", e.GetKey())
			}
			out = append(out, fmt.Sprintf("entity %s: length %d kind %v name %q", e.GetKey(), v.DocLen(slot), v.Kind(slot), v.Name(slot)))
		}
		for _, term := range v.Vocabulary() {
			var ps []string
			for _, p := range v.TermPostings(term) {
				ps = append(ps, fmt.Sprintf("%s:%d", v.Key(p.Slot), p.TF))
			}
			slices.Sort(ps)
			out = append(out, "term "+term+": "+strings.Join(ps, ","))
		}
		var order []string
		v.InOrder(func(slot uint32) bool {
			order = append(order, v.Key(slot))
			return true
		})
		out = append(out, "name order "+strings.Join(order, ","))
		for _, d := range v.Documents() {
			out = append(out, fmt.Sprintf("document %s/%v: %d %v", d.Document.GetKey(), d.Document.GetSource(), d.Entities, d.Kinds))
		}
		has, dims := v.HasVectors()
		out = append(out, fmt.Sprintf("total length %d, %d entities, vectors %v %d", v.TotalLen(), v.DocCount(), has, dims))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

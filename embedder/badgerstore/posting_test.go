package badgerstore_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestView_PostingsAndCountsMatchWalk stores the whole Open5e snapshot
// and checks, again after writes (snapshotStages):
//   - postings: every (field, value) of every entity finds exactly the
//     entities a dense bitmap built from EntityFields holds, the compact
//     postings (short lists for unique values, Roaring bitmaps for the
//     rest) against the obvious structure;
//   - counts: the counts kept on write (documents, kinds) against a walk
//     over every stored entity.
//
// One test, so the race-instrumented run stores the snapshot once for both.
func TestView_PostingsAndCountsMatchWalk(t *testing.T) {
	snapshotStages(t, func(t *testing.T, s *badgerstore.Store, live map[string]*lkv1.Entity) {
		t.Run("postings", func(t *testing.T) { checkPostings(t, s, live) })
		t.Run("counts", func(t *testing.T) { checkCounts(t, s, live) })
	})
}

// snapshotStages stores the whole snapshot and calls check; then deletes
// a third of the entities and writes half of those back, so postings
// shrink below and grow past the list's bound and documents lose and
// regain entities, and calls check again.
func snapshotStages(t *testing.T, check func(t *testing.T, s *badgerstore.Store, live map[string]*lkv1.Entity)) {
	ctx := context.Background()
	es, err := open5e.SnapshotEntities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, t.TempDir(), nil)
	apply := func(ws []badgerstore.Write) {
		t.Helper()
		for len(ws) > 0 {
			n := min(len(ws), 500)
			if err := s.Apply(ctx, ws[:n]); err != nil {
				t.Fatal(err)
			}
			ws = ws[n:]
		}
	}
	var ws []badgerstore.Write
	for _, e := range es {
		ws = append(ws, badgerstore.Write{Entity: e})
	}
	apply(ws)
	live := map[string]*lkv1.Entity{}
	for _, e := range es {
		live[e.GetKey()] = e
	}
	t.Run("stored", func(t *testing.T) { check(t, s, live) })

	ws = ws[:0]
	for i, e := range es {
		if i%3 == 0 {
			ws = append(ws, badgerstore.Write{DeleteKey: e.GetKey()})
			delete(live, e.GetKey())
		}
	}
	apply(ws)
	ws = ws[:0]
	for i, e := range es {
		if i%6 == 0 {
			ws = append(ws, badgerstore.Write{Entity: e})
			live[e.GetKey()] = e
		}
	}
	apply(ws)
	t.Run("rewritten", func(t *testing.T) { check(t, s, live) })
}

func checkCounts(t *testing.T, s *badgerstore.Store, live map[string]*lkv1.Entity) {
	t.Helper()
	type id struct {
		src lkv1.Source
		key string
	}
	walk := map[id]map[string]int{} // kind slug -> entities, "" -> all
	kinds := map[string]int{}
	for _, e := range live {
		k := id{e.GetDocument().GetSource(), e.GetDocument().GetKey()}
		if walk[k] == nil {
			walk[k] = map[string]int{}
		}
		walk[k][""]++
		walk[k][e.GetKind().Slug()]++
		kinds[e.GetKind().Slug()]++
	}
	err := s.View(context.Background(), func(v *badgerstore.View) error {
		docs := v.Documents()
		if len(docs) != len(walk) {
			t.Errorf("Documents: %d, a walk finds %d", len(docs), len(walk))
		}
		for _, d := range docs {
			k := id{d.Document.GetSource(), d.Document.GetKey()}
			want := walk[k]
			if d.Entities != want[""] {
				t.Errorf("%v: %d entities, a walk finds %d", k, d.Entities, want[""])
			}
			for kind, n := range want {
				if kind != "" && d.Kinds[kind] != n {
					t.Errorf("%v: %d of kind %s, a walk finds %d", k, d.Kinds[kind], kind, n)
				}
			}
			if len(d.Kinds) != len(want)-1 {
				t.Errorf("%v: kinds %v, a walk finds %v", k, d.Kinds, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Kinds; !maps.Equal(got, kinds) {
		t.Errorf("Stats().Kinds = %v, a walk finds %v", got, kinds)
	}
}

func checkPostings(t *testing.T, s *badgerstore.Store, live map[string]*lkv1.Entity) {
	t.Helper()
	err := s.View(context.Background(), func(v *badgerstore.View) error {
		dense := map[[2]string]*badgerstore.Set{}
		add := func(field, value string, slot uint32) {
			k := [2]string{field, value}
			if dense[k] == nil {
				dense[k] = &badgerstore.Set{}
			}
			dense[k].Add(slot)
		}
		for key, e := range live {
			slot, ok := v.Slot(key)
			if !ok {
				t.Fatalf("%s is stored but has no slot", key)
			}
			f := badgerstore.EntityFields(e)
			for field, vals := range f.Keywords {
				for _, val := range vals {
					add(field, val, slot)
				}
			}
			for field, b := range f.Bools {
				add(field, map[bool]string{true: "true", false: "false"}[b], slot)
			}
		}
		values := map[string]int{}
		for k, want := range dense {
			got := v.Postings(k[0], k[1])
			if !slices.Equal(elems(got), elems(*want)) {
				t.Errorf("Postings(%s, %q) = %v, want %v", k[0], k[1], elems(got), elems(*want))
			}
			values[k[0]]++
		}
		// The unique-valued fields and the many-member ones are both here.
		for _, f := range []string{badgerstore.FieldKey, badgerstore.FieldName, badgerstore.FieldKind, badgerstore.FieldDocument} {
			if values[f] == 0 {
				t.Errorf("no values of %s checked", f)
			}
		}
		if values[badgerstore.FieldKey] != len(live) {
			t.Errorf("%d keys checked, want %d", values[badgerstore.FieldKey], len(live))
		}
		// Several values at once are their union: every value of each
		// field at once (the sources' postings are large enough to be
		// bitmaps, not lists of slots).
		all := map[string][]string{}
		union := map[string]*badgerstore.Set{}
		for k, want := range dense {
			all[k[0]] = append(all[k[0]], k[1])
			if union[k[0]] == nil {
				union[k[0]] = &badgerstore.Set{}
			}
			union[k[0]].Or(*want)
		}
		for field, vals := range all {
			if got := v.Postings(field, vals...); !slices.Equal(elems(got), elems(*union[field])) {
				t.Errorf("Postings(%s, its %d values): %d slots, want %d", field, len(vals), got.Len(), union[field].Len())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

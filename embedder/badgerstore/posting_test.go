package badgerstore_test

import (
	"context"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestView_PostingsMatchDense stores the whole Open5e snapshot and checks
// that every (field, value) of every entity finds exactly the entities a
// dense bitmap built from EntityFields holds: the compact postings (short
// lists for unique values, Roaring bitmaps for the rest) against the
// obvious structure. Then it deletes a third of the entities and writes
// half of those back, so postings shrink below and grow past the list's
// bound, and checks again.
func TestView_PostingsMatchDense(t *testing.T) {
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
	check(t, s, live)

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
	check(t, s, live)
}

func check(t *testing.T, s *badgerstore.Store, live map[string]*lkv1.Entity) {
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

package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

var srd = &lkv1.Document{Key: "srd-2014", Name: "System Reference Document 5.1", Source: lkv1.Source_SOURCE_OPEN5E_V2, GameSystem: "5e-2014"}

func spell(slug, name string, level int32, school, hash string) *lkv1.Entity {
	return &lkv1.Entity{
		Key: "open5e_v2:srd-2014:spell:" + slug, Slug: slug, Kind: lkv1.Kind_KIND_SPELL, Name: name,
		Document: srd, SourceKey: "srd_" + slug, Description: name + " description", ContentHash: hash,
		Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: level, School: school, Classes: []string{"wizard"}}},
	}
}

func openStore(t *testing.T, dir string, idx *vectorindex.Index) *badgerstore.Store {
	t.Helper()
	s, err := badgerstore.Open(dir, idx, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newIndex(t *testing.T) *vectorindex.Index {
	t.Helper()
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: 3, Fields: badgerstore.PayloadFields()})
	if err != nil {
		t.Fatalf("embeddedindex.Open: %v", err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

// keys returns the entity keys in set, in name order.
func keys(t *testing.T, s *badgerstore.Store, fn func(v *badgerstore.View) badgerstore.Set) []string {
	t.Helper()
	var out []string
	err := s.View(context.Background(), func(v *badgerstore.View) error {
		v.InNameOrder(fn(v), func(slot uint32) bool {
			out = append(out, v.Key(slot))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	return out
}

func TestStore_ApplyReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, newIndex(t))
	fireball := spell("fireball", "Fireball", 3, "evocation", "h1")
	shield := spell("shield", "Shield", 1, "abjuration", "h2")
	if err := s.Apply(ctx, []badgerstore.Write{
		{Entity: fireball, Vector: []float32{1, 0, 0}},
		{Entity: shield, Vector: []float32{0, 1, 0}},
	}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := s.SetModel(ctx, badgerstore.ModelInfo{Name: "m", Dimensions: 3, Lowercase: true}); err != nil {
		t.Fatalf("SetModel: %v", err)
	}
	// The same writes again change nothing.
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: fireball, Vector: []float32{1, 0, 0}}}); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if got := s.Stats(); got.Entities != 2 || got.Vectors != 2 || got.Kinds["spell"] != 2 {
		t.Fatalf("Stats = %+v, want 2 entities, 2 vectors, 2 spells", got)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	idx := newIndex(t)
	s = openStore(t, dir, idx)
	if got, want := s.Model(), (badgerstore.ModelInfo{Name: "m", Dimensions: 3, Lowercase: true}); got != want {
		t.Errorf("Model after reopen = %+v, want %+v", got, want)
	}
	if n, err := idx.Count(ctx); err != nil || n != 2 {
		t.Errorf("vector index Count after reopen = %d, %v; want 2", n, err)
	}
	hits, err := idx.Search(ctx, []float32{0.9, 0.1, 0}, &vectorindex.Filter{Keywords: map[string][]string{badgerstore.FieldSchool: {"evocation"}}}, 5)
	if err != nil || len(hits) != 1 || hits[0].ID != fireball.Key {
		t.Errorf("Search by school payload = %v, %v; want only Fireball", hits, err)
	}
	got := keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.Postings(badgerstore.FieldSchool, "EVOCATION") })
	if !slices.Equal(got, []string{fireball.Key}) {
		t.Errorf("school=evocation after reopen = %v, want Fireball", got)
	}
	lo, hi := 1.0, 2.0
	got = keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.Range(badgerstore.FieldLevel, &lo, &hi) })
	if !slices.Equal(got, []string{shield.Key}) {
		t.Errorf("level 1-2 = %v, want Shield", got)
	}
	e, err := s.Get(ctx, fireball.Key)
	if err != nil || e.GetName() != "Fireball" || e.GetSpell().GetLevel() != 3 {
		t.Errorf("Get = %v, %v", e, err)
	}
	vec, ok, err := s.CachedVector(ctx, "", "h1")
	if err != nil || !ok || !slices.Equal(vec, []float32{1, 0, 0}) {
		t.Errorf("CachedVector(h1) = %v, %v, %v; want [1 0 0]", vec, ok, err)
	}
	if _, ok, _ := s.CachedVector(ctx, "other-model", "h1"); ok {
		t.Error("CachedVector for another model hit; want a miss")
	}
}

func TestStore_UpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	idx := newIndex(t)
	s := openStore(t, t.TempDir(), idx)
	fb := spell("fireball", "Fireball", 3, "evocation", "h1")
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: fb, Vector: []float32{1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	viewed := func() *lkv1.Entity {
		t.Helper()
		var e *lkv1.Entity
		err := s.View(ctx, func(v *badgerstore.View) error {
			slot, ok := v.Slot(fb.Key)
			if !ok {
				return errors.New("no slot")
			}
			var err error
			e, err = v.Entity(slot)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if got := viewed().GetSpell().GetLevel(); got != 3 {
		t.Fatalf("level %d, want 3", got)
	}
	// An update moves the entity between index entries, and views read
	// the new version (not a cached old one).
	moved := spell("fireball", "Fireball", 4, "conjuration", "h2")
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: moved, Vector: []float32{0, 0, 1}}}); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.Postings(badgerstore.FieldSchool, "evocation") }); len(got) != 0 {
		t.Errorf("old school still indexed: %v", got)
	}
	if got := viewed().GetSpell().GetLevel(); got != 4 {
		t.Errorf("view after update: level %d, want 4", got)
	}
	four := 4.0
	if got := keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.Range(badgerstore.FieldLevel, &four, &four) }); len(got) != 1 {
		t.Errorf("level 4 = %v, want Fireball", got)
	}
	// A tombstone removes document, indexes and vector.
	if err := s.Apply(ctx, []badgerstore.Write{{DeleteKey: fb.Key}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, fb.Key); !errors.Is(err, badgerstore.ErrNotFound) {
		t.Errorf("Get after delete: %v, want ErrNotFound", err)
	}
	if n, _ := idx.Count(ctx); n != 0 {
		t.Errorf("vector index Count after delete = %d, want 0", n)
	}
	if got := keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.All() }); len(got) != 0 {
		t.Errorf("All after delete = %v", got)
	}
	if st := s.Stats(); st.Entities != 0 || st.Vectors != 0 {
		t.Errorf("Stats after delete = %+v", st)
	}
	// Deleting a missing key is harmless.
	if err := s.Apply(ctx, []badgerstore.Write{{DeleteKey: "nope"}}); err != nil {
		t.Errorf("delete of a missing key: %v", err)
	}
	if err := s.Apply(ctx, []badgerstore.Write{{}}); !errors.Is(err, badgerstore.ErrInvalidWrite) {
		t.Errorf("empty write: %v, want ErrInvalidWrite", err)
	}
}

func TestStore_ForEachAndBM25(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), nil)
	var writes []badgerstore.Write
	for _, e := range []*lkv1.Entity{
		spell("fireball", "Fireball", 3, "evocation", "a"),
		spell("fire-bolt", "Fire Bolt", 0, "evocation", "b"),
		spell("cure-wounds", "Cure Wounds", 1, "evocation", "c"),
	} {
		writes = append(writes, badgerstore.Write{Entity: e})
	}
	if err := s.Apply(ctx, writes); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := s.ForEach(ctx, func(e *lkv1.Entity) error { names = append(names, e.GetName()); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 {
		t.Errorf("ForEach visited %v, want 3 entities", names)
	}
	err := s.View(ctx, func(v *badgerstore.View) error {
		scores := make([]float64, v.Capacity())
		relevance.BM25(v, relevance.QueryTerms("cure wounds"), v.All(), scores)
		slot, _ := v.Slot("open5e_v2:srd-2014:spell:cure-wounds")
		other, _ := v.Slot("open5e_v2:srd-2014:spell:fireball")
		if scores[slot] <= 0 || scores[other] != 0 {
			t.Errorf("BM25(cure wounds): cure=%v fireball=%v, want cure > 0 = fireball", scores[slot], scores[other])
		}
		if got := relevance.NamesSharingTrigrams(v, "firbal", 0.35); !slices.Contains(got, "fireball") {
			t.Errorf("NamesSharingTrigrams(firbal) = %v, want fireball among them", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The name trigrams follow deletes and re-adds.
func TestStore_NameTrigramsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), nil)
	fb := spell("fireball", "Fireball", 3, "evocation", "a")
	near := func() []string {
		var got []string
		if err := s.View(ctx, func(v *badgerstore.View) error {
			got = relevance.NamesSharingTrigrams(v, "firbal", 0.35)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, w := range [][]badgerstore.Write{
		{{Entity: fb}, {Entity: spell("fire-bolt", "Fire Bolt", 0, "evocation", "b")}},
		{{DeleteKey: fb.GetKey()}},
		{{Entity: fb}},
	} {
		if err := s.Apply(ctx, w); err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Contains(near(), "fireball"), i != 1; got != want {
			t.Errorf("after write %d: fireball near firbal = %v, want %v (%v)", i, got, want, near())
		}
	}
}

// Queries read consistent views while a writer applies batches.
func TestStore_ConcurrentApplyAndView(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), newIndex(t))
	done := make(chan error, 1)
	go func() {
		for i := range 50 {
			e := spell("s"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Spell", int32(i%10), "evocation", "")
			if err := s.Apply(ctx, []badgerstore.Write{{Entity: e, Vector: []float32{1, float32(i), 0}}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if n := s.Stats().Entities; n != 50 {
				t.Errorf("%d entities, want 50", n)
			}
			return
		default:
		}
		err := s.View(ctx, func(v *badgerstore.View) error {
			all := v.All()
			var err error
			v.InNameOrder(all, func(slot uint32) bool {
				_, err = v.Entity(slot)
				return err == nil
			})
			return err
		})
		if err != nil {
			t.Fatalf("View during writes: %v", err)
		}
	}
}

// Options.Model keys the embedding cache and records the model when none
// is recorded; Ready follows the store's life.
func TestStore_OptionsModelAndReady(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, nil, &badgerstore.Options{Model: "use-lite"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Errorf("Ready: %v", err)
	}
	if got := s.Model().Name; got != "use-lite" {
		t.Errorf("recorded model %q, want use-lite", got)
	}
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: spell("fireball", "Fireball", 3, "evocation", "h1"), Vector: []float32{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.CachedVector(ctx, "use-lite", "h1"); !ok || err != nil {
		t.Errorf("CachedVector(use-lite, h1) = %v, %v; want a hit", ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); !errors.Is(err, badgerstore.ErrClosed) {
		t.Errorf("Ready after Close: %v, want ErrClosed", err)
	}
	if err := s.Apply(ctx, []badgerstore.Write{{DeleteKey: "x"}}); !errors.Is(err, badgerstore.ErrClosed) {
		t.Errorf("Apply after Close: %v, want ErrClosed", err)
	}
}

// TestStore_ApplySplitsATooBigTransaction: one Apply of more than a Badger
// transaction holds (about 2.4 MB with the store's 16 MiB memtables; this
// batch is over 10 MB) commits in several transactions, and everything is
// stored, durably, once.
func TestStore_ApplySplitsATooBigTransaction(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, newIndex(t))
	const n = 1200
	text := strings.Repeat("A bolt of fire streaks to a point you choose and blossoms. ", 150) // ~9 KB
	writes := make([]badgerstore.Write, n)
	for i := range writes {
		e := spell(fmt.Sprintf("big-%04d", i), fmt.Sprintf("Big Spell %04d", i), int32(i%10), "evocation", fmt.Sprintf("h%d", i))
		e.Description = text
		writes[i] = badgerstore.Write{Entity: e, Vector: []float32{1, float32(i), 0}}
	}
	if err := s.Apply(context.Background(), writes); err != nil {
		t.Fatalf("Apply of %d large entities: %v", n, err)
	}
	if st := s.Stats(); st.Entities != n || st.Vectors != n {
		t.Fatalf("stats: %d entities, %d vectors; want %d of each", st.Entities, st.Vectors, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir, newIndex(t))
	if st := s.Stats(); st.Entities != n || st.Vectors != n {
		t.Fatalf("after reopening: %d entities, %d vectors; want %d of each", st.Entities, st.Vectors, n)
	}
	err := s.View(context.Background(), func(v *badgerstore.View) error {
		for _, w := range writes {
			e, err := v.EntityByKey(w.Entity.GetKey())
			if err != nil {
				return fmt.Errorf("%s: %w", w.Entity.GetKey(), err)
			}
			if e.GetDescription() != text || e.GetContentHash() != w.Entity.GetContentHash() {
				return fmt.Errorf("%s came back changed", w.Entity.GetKey())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStore_LargeEntities: entities just under and over Badger's value
// threshold (1 MiB, where values move to the value log) are stored and
// read back whole, alone or next to others in one Apply: the memtable is
// sized so that its largest batch still holds any single value.
func TestStore_LargeEntities(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, newIndex(t))
	var writes []badgerstore.Write
	for i, size := range []int{1<<20 - 4096, 1<<20 - 64, 1<<20 + 4096, 3 << 20} {
		e := spell(fmt.Sprintf("huge-%d", i), fmt.Sprintf("Huge Spell %d", i), 1, "evocation", fmt.Sprintf("h%d", i))
		e.Description = strings.Repeat("x", size)
		writes = append(writes, badgerstore.Write{Entity: e, Vector: []float32{1, float32(i), 0}},
			badgerstore.Write{Entity: spell(fmt.Sprintf("small-%d", i), fmt.Sprintf("Small Spell %d", i), 1, "evocation", "s")})
	}
	if err := s.Apply(context.Background(), writes); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, newIndex(t))
	for _, w := range writes {
		got, err := s.Get(context.Background(), w.Entity.GetKey())
		if err != nil {
			t.Fatalf("%s: %v", w.Entity.GetKey(), err)
		}
		if len(got.GetDescription()) != len(w.Entity.GetDescription()) {
			t.Errorf("%s: description of %d bytes, want %d", w.Entity.GetKey(), len(got.GetDescription()), len(w.Entity.GetDescription()))
		}
	}
}

// TestView_Memo: a remembered value is computed once per key and
// forgotten at the next write.
func TestView_Memo(t *testing.T) {
	s := openStore(t, t.TempDir(), newIndex(t))
	ctx := context.Background()
	calls := 0
	memo := func(key string) any {
		var got any
		if err := s.View(ctx, func(v *badgerstore.View) error {
			got = v.Memo(key, func() any { calls++; return calls })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if a, b := memo("k"), memo("k"); a != 1 || b != 1 || calls != 1 {
		t.Fatalf("memo(k) twice = %v, %v after %d computations; want 1, 1 after 1", a, b, calls)
	}
	if got := memo("other"); got != 2 {
		t.Errorf("memo(other) = %v, want 2 (its own computation)", got)
	}
	if err := s.Apply(ctx, []badgerstore.Write{{Entity: spell("fireball", "Fireball", 3, "evocation", "h")}}); err != nil {
		t.Fatal(err)
	}
	if got := memo("k"); got != 3 {
		t.Errorf("memo(k) after a write = %v, want 3 (computed again)", got)
	}
}

// diskKeys opens dir with Badger alone and counts its keys by their
// prefix ("d/", "m/", ...), then writes the extra keys.
func diskKeys(t *testing.T, dir string, extra ...string) map[string]int {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatalf("badger.Open: %v", err)
	}
	defer db.Close()
	n := map[string]int{}
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			n[k[:strings.IndexByte(k, '/')+1]]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		err := db.Update(func(txn *badger.Txn) error {
			for _, k := range extra {
				if err := txn.Set([]byte(k), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestStore_KeysOnDisk checks what a store writes: a document and a
// vector per entity, the embedding cache and the metadata, and no index
// entries (the in-memory index is built from the documents), and that a
// store holding an older version's index entries drops them at Open
// with nothing else lost.
func TestStore_KeysOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, newIndex(t), &badgerstore.Options{Model: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var ws []badgerstore.Write
	for i := range 20 {
		ws = append(ws, badgerstore.Write{Entity: spell(fmt.Sprint("s", i), fmt.Sprint("Spell ", i), int32(i%10), "evocation", fmt.Sprint("h", i)), Vector: []float32{1, 0, 0}})
	}
	ws = append(ws, badgerstore.Write{DeleteKey: ws[0].Entity.Key})
	if err := s.Apply(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"d/": 19, "v/": 19, "c/": 20, "m/": 3}
	if got := diskKeys(t, dir, "i/level\x00003\x00"+ws[1].Entity.Key, "n/level\x00x"+ws[1].Entity.Key); !maps.Equal(got, want) {
		t.Fatalf("keys by prefix after Apply: %v, want %v", got, want)
	}

	s = openStore(t, dir, newIndex(t))
	if got := keys(t, s, func(v *badgerstore.View) badgerstore.Set { return v.All() }); len(got) != 19 {
		t.Errorf("reopened with an older version's index keys: %d spells, want 19", len(got))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := diskKeys(t, dir); !maps.Equal(got, want) {
		t.Errorf("keys by prefix after reopening: %v, want %v", got, want)
	}
}

package orcbrew_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
)

// TestMirror_DigestsOnlyChangedFiles: a Mirror reads a file to digest it
// only when its size or modification time changed, and still notices a
// change that keeps the size. A folder as the last pass found it in step
// costs no listing of the bucket (a quiet pass) while the bucket's stream
// has had no write; an object someone else deleted is put again at once.
func TestMirror_DigestsOnlyChangedFiles(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	ctx := t.Context()
	dir := t.TempDir()
	at := time.Now().Add(-time.Hour) // settled
	write := func(name, feat string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"Book" {:orcpub.dnd.e5/feats {:a {:name "`+feat+`"}}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	m := orcbrew.NewMirror(js, dir, &orcbrew.MirrorOptions{Settle: time.Second})
	pass := func(what string, quiet bool, digested, put, unchanged []string) {
		t.Helper()
		res, err := m.Sync(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		slices.Sort(res.Digested)
		if res.Quiet != quiet || !slices.Equal(res.Digested, digested) || !slices.Equal(res.Put, put) || !slices.Equal(res.Unchanged, unchanged) {
			t.Errorf("%s: quiet %v, digested %q, put %q, unchanged %q; want %v, %q, %q, %q", what,
				res.Quiet, res.Digested, res.Put, res.Unchanged, quiet, digested, put, unchanged)
		}
	}
	both := []string{"a.orcbrew", "b.orcbrew"}
	write("a.orcbrew", "Alpha")
	write("b.orcbrew", "Bravo")
	pass("first pass", false, both, both, nil)
	pass("nothing changed since a pass that put", false, nil, nil, both)
	pass("nothing changed", true, nil, nil, both)
	write("a.orcbrew", "Delta") // the same size, a new modification time
	pass("a rewritten, same size", false, []string{"a.orcbrew"}, []string{"a.orcbrew"}, []string{"b.orcbrew"})
	write("b.orcbrew", "Bravo") // touched: the same bytes
	pass("b touched", false, []string{"b.orcbrew"}, nil, both)
	pass("nothing changed again", true, nil, nil, both)
	if err := os.Remove(filepath.Join(dir, "b.orcbrew")); err != nil {
		t.Fatal(err)
	}
	res, err := m.Sync(ctx)
	if err != nil {
		t.Fatalf("b removed: %v", err)
	}
	if res.Quiet || !slices.Equal(res.Deleted, []string{"b.orcbrew"}) {
		t.Errorf("b removed: quiet %v, deleted %q; want a pass that deletes b", res.Quiet, res.Deleted)
	}

	// Someone else deletes a's object: the bucket's stream moved on, so
	// the next pass lists it and puts a again.
	obs, err := js.ObjectStore(ctx, ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	pass("in step", false, nil, nil, []string{"a.orcbrew"})
	pass("in step, quiet", true, nil, nil, []string{"a.orcbrew"})
	if err := obs.Delete(ctx, "a.orcbrew"); err != nil {
		t.Fatal(err)
	}
	pass("object deleted by someone else", false, nil, []string{"a.orcbrew"}, nil)
	pass("put again", false, nil, nil, []string{"a.orcbrew"})
	pass("quiet again", true, nil, nil, []string{"a.orcbrew"})
}

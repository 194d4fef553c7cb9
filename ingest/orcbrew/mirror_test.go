package orcbrew_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
)

// TestMirror_DigestsOnlyChangedFiles: a Mirror reads a file to digest it
// only when its size or modification time changed, and still notices a
// change that keeps the size.
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
	pass := func(what string, digested, put, unchanged []string) {
		t.Helper()
		res, err := m.Sync(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		slices.Sort(res.Digested)
		if !slices.Equal(res.Digested, digested) || !slices.Equal(res.Put, put) || !slices.Equal(res.Unchanged, unchanged) {
			t.Errorf("%s: digested %q, put %q, unchanged %q; want %q, %q, %q", what,
				res.Digested, res.Put, res.Unchanged, digested, put, unchanged)
		}
	}
	write("a.orcbrew", "Alpha")
	write("b.orcbrew", "Bravo")
	pass("first pass", []string{"a.orcbrew", "b.orcbrew"}, []string{"a.orcbrew", "b.orcbrew"}, nil)
	pass("nothing changed", nil, nil, []string{"a.orcbrew", "b.orcbrew"})
	write("a.orcbrew", "Delta") // the same size, a new modification time
	pass("a rewritten, same size", []string{"a.orcbrew"}, []string{"a.orcbrew"}, []string{"b.orcbrew"})
	write("b.orcbrew", "Bravo") // touched: the same bytes
	pass("b touched", []string{"b.orcbrew"}, nil, []string{"a.orcbrew", "b.orcbrew"})
	pass("nothing changed again", nil, nil, []string{"a.orcbrew", "b.orcbrew"})
}

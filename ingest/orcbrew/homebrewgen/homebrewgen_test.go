package homebrewgen_test

import (
	"bytes"
	"os"
	"testing"

	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/ingest/orcbrew/homebrewgen"
)

func TestWriteDir(t *testing.T) {
	opts := homebrewgen.Options{Spells: 301, Monsters: 299, Files: 3, Seed: 7}
	a, err := homebrewgen.WriteDir(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := homebrewgen.WriteDir(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != opts.Files {
		t.Fatalf("got %d files, want %d", len(a), opts.Files)
	}
	counts := map[string]uint64{}
	names := map[string]bool{}
	for i := range a {
		da, err := os.ReadFile(a[i])
		if err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(b[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two runs with the same options wrote different bytes", a[i])
		}
		f, err := orcbrew.Decode(a[i], da, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Warnings) > 0 {
			t.Errorf("%s: warnings %q", a[i], f.Warnings)
		}
		for k, n := range f.Counts {
			counts[k] += n
		}
		for _, e := range f.Entities {
			if e.GetDescription() == "" && e.GetCreature() == nil {
				t.Errorf("%s: no description", e.GetKey())
			}
			if names[e.GetName()] {
				t.Errorf("name %q twice", e.GetName())
			}
			names[e.GetName()] = true
		}
	}
	if counts["spell"] != uint64(opts.Spells) || counts["creature"] != uint64(opts.Monsters) {
		t.Errorf("decoded %v, want %d spells and %d creatures", counts, opts.Spells, opts.Monsters)
	}
}

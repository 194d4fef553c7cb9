package orcbrew_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest/edn"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// FuzzDecode runs parser and normaliser on arbitrary input: no panic, and
// every entity that comes out can be published (keyed, hashed, valid
// UTF-8 so that it marshals).
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{good, bad} {
		files, err := filepath.Glob(filepath.Join(dir, "*.orcbrew"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(`{"B" {:orcpub.dnd.e5/monsters {:m {:name "M" :challenge "1/0" :hit-points {:die 99999999999 :die-count 99999999999} :speed {:fly 1e300}}}}}`))
	opts := &orcbrew.DecodeOptions{Parse: &edn.Options{MaxSize: 1 << 20, MaxDepth: 50, MaxStringLen: 64 << 10}}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := orcbrew.Decode("fuzz.orcbrew", data, opts)
		if err != nil {
			return
		}
		var n uint64
		for _, c := range file.Counts {
			n += c
		}
		if n != uint64(len(file.Entities)) {
			t.Fatalf("counts add up to %d, have %d entities", n, len(file.Entities))
		}
		seen := map[string]bool{}
		for _, e := range file.Entities {
			if e.GetKey() == "" || e.GetContentHash() == "" || e.GetDocument().GetSource() != lkv1.Source_SOURCE_ORCBREW {
				t.Fatalf("entity not publishable: %v", e)
			}
			if seen[e.GetKey()] {
				t.Fatalf("duplicate key %s", e.GetKey())
			}
			seen[e.GetKey()] = true
			if _, err := proto.Marshal(e); err != nil {
				t.Fatalf("%s does not marshal: %v", e.GetKey(), err)
			}
		}
		st := &lkv1.ImportState{Warnings: file.Warnings, Books: file.Books}
		if _, err := proto.Marshal(st); err != nil {
			t.Fatalf("warnings or books do not marshal: %v", err)
		}
	})
}

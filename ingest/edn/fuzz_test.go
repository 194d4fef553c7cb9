package edn_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"lorekeeper.dev/ingest/edn"
)

// FuzzParse feeds arbitrary bytes to the parser: it must not panic, must
// fail only with an error, must allocate no more than a fixed multiple of
// the input size, and whatever it accepts must convert to JSON. Time per
// input is bounded by the limits set here: the scanner is one pass over at
// most MaxSize bytes and refuses deeper nesting before olympos recurses.
//
// Run it with a short -fuzzminimizetime (e.g. 2s): minimising a new
// interesting input otherwise takes up to a minute, during which the
// fuzzer reports 0 execs/sec.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/orcbrew", "testdata/orcbrew-bad"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.orcbrew"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, false)
		}
	}
	for _, s := range []string{`#:a{:b 1}`, `{: 1}`, `#_ #_ 1 2 3`, `#{[1] {:a 1}}`, `\`, `#`, `#:`, `"\`, `{[{}] #{}}`, "\xef\xbb\xbf[]"} {
		f.Add([]byte(s), true)
	}
	opts := []*edn.Options{
		{MaxSize: 1 << 20, MaxDepth: 50, MaxStringLen: 64 << 10},
		{MaxSize: 1 << 20, MaxDepth: 50, MaxStringLen: 64 << 10, RepairUTF8: true},
	}
	f.Fuzz(func(t *testing.T, data []byte, repair bool) {
		o := opts[0]
		if repair {
			o = opts[1]
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := edn.Parse(data, o)
		runtime.ReadMemStats(&after)
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(512*len(data)+1<<20); alloc > limit {
			t.Fatalf("parsing %d bytes allocated %d bytes, over %d", len(data), alloc, limit)
		}
		if err != nil {
			var se *edn.SyntaxError
			if errors.As(err, &se) && (se.Offset < 0 || se.Offset > int64(len(data))) {
				t.Fatalf("error offset %d outside input of %d bytes: %v", se.Offset, len(data), err)
			}
			return
		}
		if _, err := edn.ToJSON(res.Value); err != nil {
			t.Fatalf("parsed value does not convert to JSON: %v", err)
		}
		_ = edn.String(res.Value)
	})
}

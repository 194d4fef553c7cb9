package badgerstore_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/ingest/orcbrew/homebrewgen"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// BenchmarkStoreScale stores the snapshot plus 0, 10,000 and 40,000
// synthetic homebrew entities (homebrewgen) without vectors, and reports
// the live heap the store adds (the in-memory index and Badger's tables),
// the time to apply everything in batches of 256 as the consumer does,
// the time a restart takes to open the store (rebuilding the index), and
// what a kind filter and the documents' counts cost.
func BenchmarkStoreScale(b *testing.B) {
	ctx := context.Background()
	cat, err := open5e.SnapshotEntities(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 10000, 40000} {
		es := cat
		if n > 0 {
			dir := b.TempDir()
			paths, err := homebrewgen.WriteDir(dir, homebrewgen.Options{Spells: n / 2, Monsters: n - n/2, Files: 16, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			es = append([]*lkv1.Entity(nil), cat...)
			for _, p := range paths {
				data, err := os.ReadFile(p)
				if err != nil {
					b.Fatal(err)
				}
				f, err := orcbrew.Decode(p, data, nil)
				if err != nil {
					b.Fatal(err)
				}
				es = append(es, f.Entities...)
			}
		}
		b.Run(fmt.Sprint(len(es)), func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				dir := b.TempDir()
				s, err := badgerstore.Open(dir, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for i := 0; i < len(es); i += 256 {
					var ws []badgerstore.Write
					for _, e := range es[i:min(i+256, len(es))] {
						ws = append(ws, badgerstore.Write{Entity: e})
					}
					if err := s.Apply(ctx, ws); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(time.Since(start).Seconds(), "apply-s")
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapAlloc-base.HeapAlloc)/(1<<20), "store-heap-MiB")
				timeIt(b, "kind-filter-µs", 200, func() {
					_ = s.View(ctx, func(v *badgerstore.View) error {
						set := v.All()
						set.And(v.Postings(badgerstore.FieldKind, "creature"))
						return nil
					})
				})
				timeIt(b, "documents-µs", 50, func() {
					_ = s.View(ctx, func(v *badgerstore.View) error { _ = v.Documents(); return nil })
				})
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				s, err = badgerstore.Open(dir, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(start).Seconds(), "reopen-s")
				_ = s.Close()
			}
		})
	}
}

// timeIt reports fn's median time over n calls, in µs.
func timeIt(b *testing.B, unit string, n int, fn func()) {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		fn()
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[n/2])/1e3, unit)
}

package embeddedindex_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
)

const benchDims = 512

// synth fills n random points (Gaussian components) in chunks, calling fn
// for each chunk so a 1M-point load never holds a second copy of the data.
func synth(r *rand.Rand, n, chunk int, withPayload bool, fn func([]vectorindex.Point)) {
	kinds := []string{"spell", "creature", "weapon", "armor", "magic-item", "item", "class", "race", "feat", "rule"}
	buf := make([]vectorindex.Point, 0, chunk)
	for i := 0; i < n; i++ {
		v := make([]float32, benchDims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		p := vectorindex.Point{ID: fmt.Sprintf("open5e_v2:srd:synthetic:%07d", i), Vector: v}
		if withPayload {
			p.Payload = vectorindex.Payload{
				Keywords: map[string][]string{"kind": {kinds[i%len(kinds)]}},
				Numbers:  map[string]float64{"level": float64(i % 10)},
			}
		}
		buf = append(buf, p)
		if len(buf) == chunk || i == n-1 {
			fn(buf)
			buf = buf[:0]
		}
	}
}

func query(r *rand.Rand) []float32 {
	q := make([]float32, benchDims)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	return q
}

// BenchmarkSearch measures top-10 exact search over n synthetic 512-dim
// vectors: a full scan, a scan with a keyword filter, and a search
// restricted to ~300 candidate IDs (the structured-filter path).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n >= 1_000_000 && testing.Short() {
				b.Skip("1M vectors need 2 GiB; skipped with -short")
			}
			r := rand.New(rand.NewPCG(uint64(n), 7))
			x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: benchDims})
			if err != nil {
				b.Fatal(err)
			}
			withPayload := n <= 100_000
			synth(r, n, 10_000, withPayload, func(pts []vectorindex.Point) {
				if err := x.Upsert(b.Context(), pts); err != nil {
					b.Fatal(err)
				}
			})
			defer func() { x.Close(); runtime.GC() }()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b.Logf("n=%d heap in use %.0f MiB", n, float64(m.HeapInuse)/(1<<20))
			q := query(r)
			cands := make([]string, 300)
			for i := range cands {
				cands[i] = fmt.Sprintf("open5e_v2:srd:synthetic:%07d", r.IntN(n))
			}
			cases := []struct {
				name string
				f    *vectorindex.Filter
			}{
				{"nofilter", nil},
				{"ids300", &vectorindex.Filter{IDs: cands}},
			}
			if withPayload {
				cases = append(cases, struct {
					name string
					f    *vectorindex.Filter
				}{"keyword", &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}}})
			}
			for _, tc := range cases {
				b.Run(tc.name, func(b *testing.B) {
					for b.Loop() {
						hits, err := x.Search(b.Context(), q, tc.f, 10)
						if err != nil || len(hits) != 10 {
							b.Fatalf("Search = %d hits, %v", len(hits), err)
						}
					}
				})
			}
			// The query service's semantic ranking: a score for every one
			// of 6,000 candidates (the catalogue's size).
			if n == 10_000 {
				all := make([]string, 6000)
				for i := range all {
					all[i] = fmt.Sprintf("open5e_v2:srd:synthetic:%07d", i)
				}
				b.Run("ids6000-all", func(b *testing.B) {
					for b.Loop() {
						hits, err := x.Search(b.Context(), q, &vectorindex.Filter{IDs: all}, len(all))
						if err != nil || len(hits) != len(all) {
							b.Fatalf("Search = %d hits, %v", len(hits), err)
						}
					}
				})
				// What the query service calls: Scores, in the order asked.
				b.Run("scores6000", func(b *testing.B) {
					for b.Loop() {
						scores, err := x.Scores(b.Context(), q, all, nil)
						if err != nil || len(scores) != len(all) {
							b.Fatalf("Scores = %d scores, %v", len(scores), err)
						}
					}
				})
			}
			// A kind's candidates at 46,000 entities (22,000 spells), into
			// a buffer reused as the query service does.
			if n == 100_000 {
				all := make([]string, 22_000)
				for i := range all {
					all[i] = fmt.Sprintf("open5e_v2:srd:synthetic:%07d", i*4)
				}
				var buf []float32
				b.Run("scores22000", func(b *testing.B) {
					for b.Loop() {
						scores, err := x.Scores(b.Context(), q, all, buf)
						if err != nil || len(scores) != len(all) {
							b.Fatalf("Scores = %d scores, %v", len(scores), err)
						}
						buf = scores
					}
				})
			}
		})
	}
}

// BenchmarkUpsertBulk measures loading 10k 512-dim points into an empty
// index in one call, as the storage package does at start.
func BenchmarkUpsertBulk(b *testing.B) {
	const n = 10_000
	var pts []vectorindex.Point
	synth(rand.New(rand.NewPCG(1, 1)), n, n, true, func(p []vectorindex.Point) { pts = append(pts, p...) })
	var elapsed time.Duration
	for b.Loop() {
		x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: benchDims})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := x.Upsert(b.Context(), pts); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		x.Close()
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "points/s")
}

// BenchmarkUpsertBatches measures the same load in batches of 256, the
// consumer's write pattern.
func BenchmarkUpsertBatches(b *testing.B) {
	const n, batch = 10_000, 256
	var pts []vectorindex.Point
	synth(rand.New(rand.NewPCG(1, 1)), n, n, true, func(p []vectorindex.Point) { pts = append(pts, p...) })
	for b.Loop() {
		x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: benchDims})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += batch {
			if err := x.Upsert(b.Context(), pts[i:min(i+batch, n)]); err != nil {
				b.Fatal(err)
			}
		}
		x.Close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "points/s")
}

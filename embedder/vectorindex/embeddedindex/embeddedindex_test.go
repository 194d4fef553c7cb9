package embeddedindex_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
)

// randomIndex is an index of n random points of d dimensions, "p0" to
// "p<n-1>", each with a level (its number modulo 10).
func randomIndex(t *testing.T, r *rand.Rand, n, d int) (*vectorindex.Index, []vectorindex.Point) {
	t.Helper()
	x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: d})
	if err != nil {
		t.Fatal(err)
	}
	pts := make([]vectorindex.Point, n)
	for i := range pts {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		pts[i] = vectorindex.Point{ID: fmt.Sprint("p", i), Vector: v, Payload: vectorindex.Payload{Numbers: map[string]float64{"level": float64(i % 10)}}}
	}
	if err := x.Upsert(t.Context(), pts); err != nil {
		t.Fatal(err)
	}
	return x, pts
}

// TestSearch_ParallelScan covers the multi-goroutine scan that only indexes
// of more than 64k points take: it must agree with the single-goroutine
// candidate path (same arithmetic, so identical hits) and with a float64
// brute-force reference: the k best scores within the fixed point's bound,
// sqrt(dims)/32767, of the k best cosines.
func TestSearch_ParallelScan(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the parallel scan needs GOMAXPROCS >= 2")
	}
	const n, d = 100_000, 8
	r := rand.New(rand.NewPCG(5, 6))
	x, pts := randomIndex(t, r, n, d)
	all := make([]string, n)
	for i, p := range pts {
		all[i] = p.ID
	}
	lvl := func(v float64) *float64 { return &v }
	for qi := range 5 {
		q := pts[r.IntN(n)].Vector
		for _, f := range []*vectorindex.Filter{nil, {Ranges: map[string]vectorindex.Range{"level": {Max: lvl(2)}}}} {
			got, err := x.Search(t.Context(), q, f, 10)
			if err != nil {
				t.Fatal(err)
			}
			seqFilter := &vectorindex.Filter{IDs: all}
			if f != nil {
				seqFilter.Ranges = f.Ranges
			}
			want, err := x.Search(t.Context(), q, seqFilter, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("query %d filter %v: parallel scan = %v, candidate path = %v", qi, f, got, want)
			}
			ref := reference(pts, q, f != nil, 10)
			for i := range got {
				if math.Abs(float64(got[i].Score)-ref[i]) > math.Sqrt(d)/32767 {
					t.Errorf("query %d: hit %d score %v, reference %v", qi, i, got[i].Score, ref[i])
				}
			}
		}
	}
}

// TestScores_Parallel covers Scores split across goroutines (tens of
// thousands of ids, as a kind has at 46,000 entities): every asked id,
// in the order asked, repeats and unknown ids among them, has the score
// the single-goroutine candidate path of Search gives it.
func TestScores_Parallel(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the parallel scoring needs GOMAXPROCS >= 2")
	}
	const n, d = 30_000, 8
	r := rand.New(rand.NewPCG(7, 8))
	x, pts := randomIndex(t, r, n, d)
	asked := make([]string, 25_000)
	for i := range asked {
		if i%1000 == 999 {
			asked[i] = fmt.Sprint("absent", i)
		} else {
			asked[i] = pts[r.IntN(n)].ID
		}
	}
	q := pts[0].Vector
	got, err := x.Scores(t.Context(), q, asked, nil)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search(t.Context(), q, &vectorindex.Filter{IDs: asked}, len(asked))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{}
	for _, h := range hits {
		want[h.ID] = h.Score
	}
	for i, id := range asked {
		w, ok := want[id]
		switch {
		case !ok && !math.IsNaN(float64(got[i])):
			t.Fatalf("score %d (%s, unknown) = %v, want NaN", i, id, got[i])
		case ok && got[i] != w:
			t.Fatalf("score %d (%s) = %v, want %v as Search gives", i, id, got[i], w)
		}
	}
}

func reference(pts []vectorindex.Point, q []float32, lowLevels bool, k int) []float64 {
	norm := func(v []float32) float64 {
		var s float64
		for _, c := range v {
			s += float64(c) * float64(c)
		}
		return math.Sqrt(s)
	}
	var scores []float64
	for _, p := range pts {
		if lowLevels && p.Payload.Numbers["level"] > 2 {
			continue
		}
		var s float64
		for i := range q {
			s += float64(q[i]) * float64(p.Vector[i])
		}
		scores = append(scores, s/norm(q)/norm(p.Vector))
	}
	slices.Sort(scores)
	slices.Reverse(scores)
	return scores[:k]
}

// TestUpsert_CopiesInput checks the index keeps no reference to the
// caller's vectors or payload maps, which the storage package reuses.
func TestUpsert_CopiesInput(t *testing.T) {
	x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := []float32{1, 0}
	kw := map[string][]string{"kind": {"spell"}}
	if err := x.Upsert(t.Context(), []vectorindex.Point{{ID: "a", Vector: v, Payload: vectorindex.Payload{Keywords: kw}}, {ID: "b", Vector: []float32{0, 1}}}); err != nil {
		t.Fatal(err)
	}
	v[0], v[1] = 0, 1
	kw["kind"][0] = "creature"
	got, err := x.Search(t.Context(), []float32{1, 0}, &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "a" || got[0].Score < 0.9999 {
		t.Errorf("Search after the caller reused its buffers = %v, want a with score 1", got)
	}
}

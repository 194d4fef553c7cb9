package query

import (
	"math/rand/v2"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestFirst: a first page taken without a heap (first) is the page take
// gives, and leaves the same candidates, so that the pages after it are
// the same too: with and without de-duplication, with ties, with names
// repeated so often that the selection runs out (first falls back), and
// for candidate counts around where first hands over to take.
func TestFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := 1 + r.IntN(400)
		names := 1 + r.IntN(n) // few names: many duplicates
		items := make([]scored, n)
		for i := range items {
			items[i] = scored{
				slot:  uint32(i),
				score: float64(r.IntN(50)) / 50, // ties
				exact: r.IntN(40) == 0,
				ref:   badgerstore.SlotRef{Kind: lkv1.Kind(1 + r.IntN(2)), NameID: uint32(r.IntN(names))},
			}
		}
		r.Shuffle(n, func(i, j int) { items[i], items[j] = items[j], items[i] })
		limit := 1 + r.IntN(30)
		dedupe := trial%2 == 0

		a, b := newRanking(slices.Clone(items)), newRanking(slices.Clone(items))
		takenA, takenB := map[kindName]bool{}, map[kindName]bool{}
		want := take(a, dedupe, takenA, limit)
		got := first(b, dedupe, takenB, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, limit %d, dedupe %v): first page %v, want %v", trial, n, limit, dedupe, slots(got), slots(want))
		}
		// The same candidates wait, and the rest of the walk is the same.
		restA, restB := slots(a.h), slots(b.h)
		slices.Sort(restA)
		slices.Sort(restB)
		if !slices.Equal(restA, restB) {
			t.Fatalf("trial %d: %d candidates left, want %d", trial, len(restB), len(restA))
		}
		if wantRest, gotRest := take(a, dedupe, takenA, 0), take(b, dedupe, takenB, 0); !slices.Equal(gotRest, wantRest) {
			t.Fatalf("trial %d: the pages after the first differ", trial)
		}
	}
}

func slots(items []scored) []uint32 {
	out := make([]uint32, len(items))
	for i, x := range items {
		out[i] = x.slot
	}
	return out
}

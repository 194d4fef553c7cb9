package qdrantindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex"
	"lorekeeper.dev/embedder/vectorindex/vectorindextest"
)

// FuzzFilterAgreement checks that the embedded backend and the Qdrant
// backend (on the stand-in, which implements Qdrant's filter semantics
// independently) select the same points for random filters over random
// payloads: a differential test of the two filter implementations.
func FuzzFilterAgreement(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(seed)
	}
	const dims, n = 8, 300
	r := rand.New(rand.NewPCG(42, 42))
	kinds := []string{"spell", "creature", "weapon"}
	classes := []string{"wizard", "cleric", "bard", "druid"}
	schools := []string{"evocation", "divination", "abjuration"}
	var pts []vectorindex.Point
	for i := range n {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		p := vectorindex.Point{ID: fmt.Sprintf("k%03d", i), Vector: v, Payload: vectorindex.Payload{
			Keywords: map[string][]string{"kind": {kinds[r.IntN(len(kinds))]}},
			Numbers:  map[string]float64{},
			Bools:    map[string]bool{},
		}}
		if r.IntN(4) > 0 { // some points lack a field
			p.Payload.Keywords["school"] = []string{schools[r.IntN(len(schools))]}
			p.Payload.Numbers["level"] = float64(r.IntN(10))
			p.Payload.Bools["ritual"] = r.IntN(2) == 0
		}
		for _, c := range classes {
			if r.IntN(3) == 0 {
				p.Payload.Keywords["classes"] = append(p.Payload.Keywords["classes"], c)
			}
		}
		if r.IntN(5) == 0 {
			p.Payload.Numbers["challenge_rating"] = float64(r.IntN(8)) / 4
		}
		pts = append(pts, p)
	}

	f.Fuzz(func(t *testing.T, seed uint64) {
		// Both indexes are rebuilt for every input (tens of milliseconds):
		// each input's t owns the stand-in it starts.
		embedded, err := embeddedindex.Open(&vectorindex.Options{Dimensions: dims, Fields: vectorindextest.Schema})
		if err != nil {
			t.Fatal(err)
		}
		tg := standIn(t)
		qd, err := qdrantindex.Open(t.Context(), tg.client, &vectorindex.Options{Dimensions: dims, Model: "agreement", Fields: vectorindextest.Schema})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*vectorindex.Index{embedded, qd} {
			if err := x.Upsert(t.Context(), pts); err != nil {
				t.Fatal(err)
			}
		}
		fr := rand.New(rand.NewPCG(seed, 7))
		filter := &vectorindex.Filter{}
		if fr.IntN(2) == 0 {
			filter.Keywords = map[string][]string{}
			pick := func(vocab []string) []string {
				var out []string
				for _, v := range vocab {
					if fr.IntN(2) == 0 {
						out = append(out, v)
					}
				}
				if len(out) == 0 {
					out = vocab[:1]
				}
				return out
			}
			switch fr.IntN(3) {
			case 0:
				filter.Keywords["kind"] = pick(kinds)
			case 1:
				filter.Keywords["classes"] = pick(classes)
			default:
				filter.Keywords["school"] = pick(schools)
			}
		}
		if fr.IntN(2) == 0 {
			lo, hi := float64(fr.IntN(10)), float64(fr.IntN(10))
			rg := vectorindex.Range{}
			switch fr.IntN(3) {
			case 0:
				rg.Min = &lo
			case 1:
				rg.Max = &hi
			default:
				rg.Min, rg.Max = &lo, &hi
			}
			filter.Ranges = map[string]vectorindex.Range{"level": rg}
		}
		if fr.IntN(3) == 0 {
			filter.Bools = map[string]bool{"ritual": fr.IntN(2) == 0}
		}
		if fr.IntN(3) == 0 {
			for range 40 {
				filter.IDs = append(filter.IDs, fmt.Sprintf("k%03d", fr.IntN(n+20))) // some unknown
			}
		}
		q := pts[fr.IntN(n)].Vector
		var sets [2][]string
		for i, x := range []*vectorindex.Index{embedded, qd} {
			got, err := x.IDs(t.Context(), filter)
			if err != nil {
				t.Fatalf("%s IDs(%+v): %v", x.Backend(), filter, err)
			}
			slices.Sort(got)
			sets[i] = got
			hits, err := x.Search(t.Context(), q, filter, n)
			if err != nil {
				t.Fatalf("%s Search(%+v): %v", x.Backend(), filter, err)
			}
			hitIDs := make([]string, len(hits))
			for j, h := range hits {
				hitIDs[j] = h.ID
			}
			slices.Sort(hitIDs)
			if !slices.Equal(hitIDs, got) {
				t.Errorf("%s: Search selects %d points, IDs %d, for %+v", x.Backend(), len(hitIDs), len(got), filter)
			}
		}
		if !slices.Equal(sets[0], sets[1]) {
			t.Errorf("filter %+v: embedded selects %d points, qdrant %d:\n%v\n%v", filter, len(sets[0]), len(sets[1]), sets[0], sets[1])
		}
	})
}

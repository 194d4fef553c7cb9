package badgerstore_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
)

// model is a Set written the obvious way, to check Set against.
type model map[uint32]bool

func (m model) sorted() []uint32 {
	out := make([]uint32, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}

func elems(s badgerstore.Set) []uint32 {
	var out []uint32
	s.Each(func(x uint32) bool { out = append(out, x); return true })
	return out
}

func checkSet(t *testing.T, what string, s badgerstore.Set, m model, probe []uint32) {
	t.Helper()
	if got, want := elems(s), m.sorted(); !slices.Equal(got, want) {
		t.Fatalf("%s: Each gives %v, want %v", what, got, want)
	}
	if s.Len() != len(m) || s.Empty() != (len(m) == 0) {
		t.Fatalf("%s: Len %d, Empty %v; want %d, %v", what, s.Len(), s.Empty(), len(m), len(m) == 0)
	}
	for _, x := range probe {
		if s.Has(x) != m[x] {
			t.Fatalf("%s: Has(%d) = %v, want %v", what, x, s.Has(x), m[x])
		}
	}
}

// TestSet checks every operation against a map, on sets whose slots sit
// on both sides of the 64-bit word boundaries and of different lengths.
func TestSet(t *testing.T) {
	probe := []uint32{0, 1, 62, 63, 64, 65, 127, 128, 129, 190, 191, 192, 500, 1000, 4095, 4096}
	sizes := []uint32{1, 63, 64, 65, 129, 200, 5000}
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n uint32) (badgerstore.Set, model) {
		var s badgerstore.Set
		m := model{}
		for range r.IntN(40) {
			x := r.Uint32N(n)
			s.Add(x)
			m[x] = true
		}
		return s, m
	}
	for round := range 200 {
		a, ma := random(sizes[round%len(sizes)])
		b, mb := random(sizes[(round/len(sizes))%len(sizes)])
		checkSet(t, "add", a, ma, probe)

		and := a.Clone()
		and.And(b)
		mand := model{}
		for x := range ma {
			if mb[x] {
				mand[x] = true
			}
		}
		checkSet(t, "and", and, mand, probe)

		or := a.Clone()
		or.Or(b)
		mor := model{}
		for x := range ma {
			mor[x] = true
		}
		for x := range mb {
			mor[x] = true
		}
		checkSet(t, "or", or, mor, probe)

		// Clone is a copy: changing it leaves the original alone.
		checkSet(t, "original after and/or on clones", a, ma, probe)
	}

	t.Run("zero and SetOf", func(t *testing.T) {
		var zero badgerstore.Set
		checkSet(t, "zero", zero, model{}, probe)
		zero.And(badgerstore.SetOf(1, 2))
		checkSet(t, "zero and", zero, model{}, probe)
		zero.Or(badgerstore.SetOf(64, 3, 64))
		checkSet(t, "zero or", zero, model{3: true, 64: true}, probe)
	})
	t.Run("each stops", func(t *testing.T) {
		var seen []uint32
		badgerstore.SetOf(1, 70, 200, 300).Each(func(x uint32) bool {
			seen = append(seen, x)
			return len(seen) < 2
		})
		if !slices.Equal(seen, []uint32{1, 70}) {
			t.Errorf("Each visited %v after returning false, want [1 70]", seen)
		}
	})
}

func TestSetFingerprint(t *testing.T) {
	grown := badgerstore.SetOf(3, 200)
	grown.And(badgerstore.SetOf(3)) // trailing empty words: the same set as {3}
	tests := []struct {
		name string
		a, b badgerstore.Set
		same bool
	}{
		{"empty", badgerstore.Set{}, badgerstore.SetOf(), true},
		{"same slots", badgerstore.SetOf(1, 64, 130), badgerstore.SetOf(130, 64, 1), true},
		{"trailing empty words", badgerstore.SetOf(3), grown, true},
		{"one slot more", badgerstore.SetOf(1, 2), badgerstore.SetOf(1, 2, 3), false},
		{"other word", badgerstore.SetOf(1), badgerstore.SetOf(65), false},
		{"empty and not", badgerstore.Set{}, badgerstore.SetOf(0), false},
	}
	for _, tt := range tests {
		if got := tt.a.Fingerprint() == tt.b.Fingerprint(); got != tt.same {
			t.Errorf("%s: equal fingerprints = %v, want %v", tt.name, got, tt.same)
		}
	}
}

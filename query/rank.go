package query

import (
	"cmp"
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// scored is a candidate with its mixed score in [0, 1].
type scored struct {
	slot  uint32
	score float64
	exact bool
	// hit: the candidate matched a query term, its name, or (semantic)
	// is in the upper part of the cosine range.
	hit bool
}

// Weights of the mix, measured best on the relevance set (MANIFEST.md §4).
const (
	cosineWeight = 0.5
	bm25Weight   = 0.5
	// In search, a near-name (typo-tolerant) match scores in
	// (nameFloor, 1) and everything else below nameFloor, so "firbal" puts
	// Fireball first; an exact name scores 1.
	nameFloor     = 0.9
	minFuzzySim   = 0.7
	semanticHitAt = 0.6
)

// rank scores the candidates: cosine similarity to qvec (nil: keywords
// only) and BM25 over the same texts, each rescaled to [0, 1] over the
// candidates and mixed with equal weights; an exact name match scores 1
// and comes first. fuzzy adds typo-tolerant name matching (search).
func rank(v *badgerstore.View, cand badgerstore.Set, text string, qvec []float32, fuzzy bool) []scored {
	n := v.Capacity()
	bm := make([]float64, n)
	v.BM25(badgerstore.Tokenize(text), cand, bm)
	var cs []float64
	var withVec badgerstore.Set
	if qvec != nil {
		cs = make([]float64, n)
		withVec = v.Cosine(qvec, cand, cs)
	}
	bmLo, bmHi := minMax(cand, bm)
	var csLo, csHi float64
	if qvec != nil {
		csLo, csHi = minMax(withVec, cs)
	}
	lower := strings.ToLower(strings.TrimSpace(text))
	exact := v.Postings(badgerstore.FieldName, lower)
	var near map[string]float64
	if fuzzy {
		near = nearNames(v, lower)
	}
	out := make([]scored, 0, cand.Len())
	cand.Each(func(slot uint32) bool {
		sc := scored{slot: slot}
		b := rescale(bm[slot], bmLo, bmHi)
		if qvec != nil {
			c := 0.0
			if withVec.Has(slot) {
				c = rescale(cs[slot], csLo, csHi)
			}
			sc.score = cosineWeight*c + bm25Weight*b
			sc.hit = bm[slot] > 0 || c >= semanticHitAt
		} else {
			sc.score = b
			sc.hit = bm[slot] > 0
		}
		if fuzzy {
			// Name matches rank above everything else: near names (typos)
			// in (nameFloor, 1), the rest scaled below nameFloor.
			sc.score *= nameFloor
			if sim, ok := near[v.Name(slot)]; ok {
				sc.score = nameFloor + (1-nameFloor)*(sim-minFuzzySim)/(1-minFuzzySim)*0.99
				sc.hit = true
			}
		}
		if exact.Has(slot) {
			sc.score, sc.exact, sc.hit = 1, true, true
		}
		out = append(out, sc)
		return true
	})
	slices.SortFunc(out, func(a, b scored) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.slot, b.slot)
	})
	return out
}

func minMax(set badgerstore.Set, xs []float64) (lo, hi float64) {
	first := true
	set.Each(func(s uint32) bool {
		x := xs[s]
		if first {
			lo, hi, first = x, x, false
		}
		lo, hi = min(lo, x), max(hi, x)
		return true
	})
	return lo, hi
}

// rescale maps x from [lo, hi] to [0, 1]; with no spread, a positive score
// is 1 and nothing 0.
func rescale(x, lo, hi float64) float64 {
	if hi <= lo {
		if x > 0 {
			return 1
		}
		return 0
	}
	return (x - lo) / (hi - lo)
}

// nearNames returns the stored names within typo distance of q, with their
// similarity (1 - edit distance / length) of at least minFuzzySim.
func nearNames(v *badgerstore.View, q string) map[string]float64 {
	qr := []rune(q)
	if len(qr) < 4 || len(qr) > 64 {
		return nil
	}
	out := map[string]float64{}
	for _, name := range v.NamesSharingTrigrams(q, 2) {
		nr := []rune(name)
		longest := max(len(nr), len(qr))
		maxDist := int(float64(longest) * (1 - minFuzzySim))
		if abs(len(nr)-len(qr)) > maxDist {
			continue
		}
		d := editDistance(qr, nr)
		if sim := 1 - float64(d)/float64(longest); sim >= minFuzzySim {
			out[name] = sim
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the Damerau-Levenshtein (optimal string alignment)
// distance between a and b.
func editDistance(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// fold turns the ranked candidates into at most limit results, reading
// only their entities. With dedupe, same-named entities of one kind from
// other documents become alternates of the best-ranked one.
func fold(v *badgerstore.View, ranked []scored, limit int, dedupe, withScore bool) ([]*lkv1.Result, error) {
	type group struct {
		res  *lkv1.Result
		slot uint32
	}
	var groups []*group
	byName := map[string]*group{}
	for _, sc := range ranked {
		key := v.Kind(sc.slot).String() + "\x00" + v.Name(sc.slot)
		if g := byName[key]; dedupe && g != nil {
			g.res.Alternates = append(g.res.Alternates, alternate(v, sc.slot))
			continue
		}
		if len(groups) >= limit {
			if !dedupe {
				break
			}
			continue
		}
		g := &group{res: &lkv1.Result{}, slot: sc.slot}
		if withScore {
			score := min(max(sc.score, 0), 1)
			g.res.SimilarityScore = &score
		}
		groups = append(groups, g)
		byName[key] = g
	}
	out := make([]*lkv1.Result, 0, len(groups))
	for _, g := range groups {
		e, err := v.Entity(g.slot)
		if err != nil {
			return nil, err
		}
		g.res.Entity = e
		g.res.Uri = lkv1.EntityURI(e.GetKey())
		out = append(out, g.res)
	}
	return out, nil
}

func alternate(v *badgerstore.View, slot uint32) *lkv1.Alternate {
	d := v.Document(slot)
	key := v.Key(slot)
	return &lkv1.Alternate{
		Key:          key,
		Uri:          lkv1.EntityURI(key),
		DocumentKey:  d.GetKey(),
		DocumentName: d.GetName(),
		GameSystem:   d.GetGameSystem(),
	}
}

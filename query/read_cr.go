package query

import (
	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// crReader reads a challenge rating: "CR 1/2", "challenge rating 5", "CR 5
// to 10", "CR 10 or lower", "under CR 2".
type crReader struct{}

func (crReader) facet() string { return "cr" }

func (crReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		if r.words[i] != "cr" && r.words[i] != "challenge" {
			continue
		}
		j := i + 1
		if r.word(j) == "rating" {
			j++
		}
		cr, ok := lkv1.ParseChallengeRating(r.word(j))
		if !ok || cr < 0 || cr > 30 {
			continue
		}
		// "CR 5 to 10", "CR 5-10": both bounds.
		k := j + 1
		if r.word(k) == "to" || r.word(k) == "through" {
			k++
		}
		if hi, ok := lkv1.ParseChallengeRating(r.word(k)); ok && hi > cr && hi <= 30 {
			w := r.mark(i, k+1)
			r.add(rangeFilter(badgerstore.FieldCR, atLeast, cr, w))
			r.add(rangeFilter(badgerstore.FieldCR, atMost, hi, w))
			i = k
			continue
		}
		r.addCompared(badgerstore.FieldCR, cr, i, j+1)
		i = j
	}
}

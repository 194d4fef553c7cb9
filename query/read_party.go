package query

import (
	"strconv"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
)

// partyReader reads a party's level as the challenge rating it can take:
// "for a level 8 party", "5th level players". A monster's challenge
// rating is the level of a party of four that can defeat it without a
// death (the SRD's definition), so those of the party's level and below;
// the nearest first, unless another order is said (orderReader).
type partyReader struct{}

func (partyReader) facet() string { return "party" }

func (partyReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		l, ok := partyLevelAt(r, i)
		if !ok {
			continue
		}
		if l >= 1 && l <= 20 {
			r.party = r.mark(i, i+3)
			r.add(rangeFilter(badgerstore.FieldCR, atMost, float64(l), r.party))
			i += 2
		}
	}
}

// partyNouns are the words a level is said of when it is the party's.
var partyNouns = map[string]bool{"party": true, "player": true, "group": true, "character": true, "pc": true, "pcs": true,
	"adventurer": true, "hero": true, "team": true}

// partyLevelAt reads a party's level at word i ("level 8 party", "5th
// level players"): the level (0 when it is none), and whether the words
// say a party's level at all, which no other reader then reads as a level.
func partyLevelAt(r *reading, i int) (int, bool) {
	w := r.words[i]
	if !partyNouns[relevance.Stem(r.word(i+2))] || w != "level" && (ordinalNumber(w) == 0 || r.word(i+1) != "level") {
		return 0, false
	}
	l := ordinalNumber(w)
	if l == 0 {
		l, _ = strconv.Atoi(r.word(i + 1))
	}
	return l, true
}

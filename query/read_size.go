package query

import (
	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
)

// sizeReader reads a size said as a table says it, not as a stat block
// does: "a big monster", "an enormous beast", "a sea monster big enough to
// sink a ship" want a Large or larger creature; "a little critter", "a
// tiny creature" want a Small or smaller one. The stat block's own words
// before a creature ("a Huge dragon") are valueReader's. A word about size
// that does not say the creature's ("a big group", "how big is a
// tarrasque", "big damage") reads nothing.
type sizeReader struct{}

func (sizeReader) facet() string { return "size" }

func (sizeReader) read(r *reading) {
	if !r.has(badgerstore.FieldSize) || r.hasRead(badgerstore.FieldSize) {
		return // a size said in the stat block's words, or a mount's, wins
	}
	for i, w := range r.words {
		sizes, ok := sizeWords[w]
		if !ok || r.used[i] || r.word(i-1) == "how" || r.word(i-1) == "too" {
			continue
		}
		next := r.word(i + 1)
		if !(creatureNouns[next] || r.voc.types[relevance.Stem(next)] || next == "enough") {
			continue
		}
		r.add(keywordFilter(badgerstore.FieldSize, sizes, false, r.mark(i, i+1)))
		return
	}
}

var (
	largeOrLarger  = []string{"large", "huge", "gargantuan"}
	smallOrSmaller = []string{"tiny", "small"}
	// sizeWords are the words a table says a size with.
	sizeWords = map[string][]string{
		"big": largeOrLarger, "bigger": largeOrLarger, "massive": largeOrLarger, "enormous": largeOrLarger,
		"gigantic": largeOrLarger, "colossal": largeOrLarger, "towering": largeOrLarger, "immense": largeOrLarger,
		"hulking": largeOrLarger, "little": smallOrSmaller, "smaller": smallOrSmaller, "miniature": smallOrSmaller,
	}
)

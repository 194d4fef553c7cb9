package query

import (
	"regexp"
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// viaCounterpart marks the suggestion of the open entity that names itself
// the counterpart of a closed-content name.
const viaCounterpart = "counterpart"

// counterpartLine is how Open5e's own options name the book option they
// stand in for: "*Compare to the core book's Eldritch Knight*" opens its
// Arcane Warrior. The named option is not open content.
var counterpartLine = regexp.MustCompile(`(?i)compare(?:d)? (?:to|with) (?:the )?core book(?:'|’)?s? ([^*\n]+)`)

// maxCounterpartReads bounds how many entities counterpart reads.
const maxCounterpartReads = 64

// counterpart finds, among cand, the entity whose text names itself the
// counterpart of name ("Compare to the core book's Eldritch Knight"), and
// returns it with the name as its text spells it. It reads only the
// entities holding every term of the name (the BM25 postings), so a name
// that matched nothing costs a few reads, not a scan.
func counterpart(v *badgerstore.View, cand badgerstore.Set, name string) (*lkv1.NameSuggestion, string) {
	want := relevance.NormalizeName(name)
	terms := relevance.Tokenize(name)
	if want == "" || len(terms) == 0 || isPattern(name) {
		return nil, ""
	}
	var slots map[uint32]bool
	for i, t := range terms {
		next := map[uint32]bool{}
		for _, p := range v.TermPostings(t) {
			if i == 0 && cand.Has(p.Slot) || slots[p.Slot] {
				next[p.Slot] = true
			}
		}
		if slots = next; len(slots) == 0 {
			return nil, ""
		}
	}
	var best *lkv1.NameSuggestion
	known := ""
	order := make([]uint32, 0, len(slots))
	for slot := range slots {
		order = append(order, slot)
	}
	slices.Sort(order) // the same reads whatever the map's order
	for i, slot := range order {
		if i == maxCounterpartReads {
			break
		}
		e, err := v.Entity(slot)
		if err != nil {
			continue
		}
		for _, m := range counterpartLine.FindAllStringSubmatch(e.GetDescription(), -1) {
			named := strings.TrimSpace(m[1])
			if relevance.NormalizeName(named) != want {
				continue
			}
			if best == nil || e.GetKey() < best.GetKey() {
				best = &lkv1.NameSuggestion{Name: e.GetName(), Key: e.GetKey(), Uri: lkv1.EntityURI(e.GetKey()),
					DocumentKey: e.GetDocument().GetKey(), DocumentName: e.GetDocument().GetName(), Score: 1, Via: viaCounterpart}
				known = named
			}
		}
	}
	return best, known
}

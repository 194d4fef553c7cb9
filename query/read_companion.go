package query

import "lorekeeper.dev/embedder/badgerstore"

// companionReader reads a creature wanted beside the party rather than
// against it. A mount ("a flying mount", "a steed to ride") is a creature
// at least one size larger than its rider (the SRD's Mounted Combat):
// Large or larger for the Medium folk most characters are. A companion's
// challenge rating still bounds it ("for a level 5 party"), but orders
// nothing: the fairest fight first is a foe's order (orderReader).
type companionReader struct{}

func (companionReader) facet() string { return "companion" }

func (companionReader) read(r *reading) {
	sized := r.hasRead(badgerstore.FieldSize)
	for i, w := range r.words {
		if r.used[i] || !companionNouns[w] {
			continue
		}
		r.companion = true
		if mountWords[w] && !sized {
			r.add(keywordFilter(badgerstore.FieldSize, largeOrLarger, false, r.mark(i, i+1)))
			sized = true
		}
	}
}

// companionNouns say a creature is wanted as a companion.
var companionNouns = map[string]bool{"mount": true, "mounts": true, "steed": true, "steeds": true, "familiar": true,
	"familiars": true, "pet": true, "pets": true, "companion": true, "companions": true, "sidekick": true,
	"sidekicks": true, "hireling": true, "hirelings": true, "retainer": true, "retainers": true}

// mountWords say it is ridden.
var mountWords = map[string]bool{"mount": true, "mounts": true, "steed": true, "steeds": true}

package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// environmentReader reads where a creature lives, in the catalogue's
// environments ("monsters that live in swamps": swamp-or-marsh; "from
// the Underdark": underworld; "desert monsters"), when the question says
// it lives there (livesAt): a place the fight is in ("a swarm of fish in
// a jungle river") is more often one the books do not list for it. Only
// some books give their creatures environments; a creature without any
// neither matches nor contradicts one (holders).
type environmentReader struct{}

func (environmentReader) facet() string { return "environment" }

func (environmentReader) read(r *reading) {
	for i, st := range r.stems {
		if r.used[i] {
			continue
		}
		n := 1
		vals := r.voc.environments[st]
		if i+1 < len(r.stems) && !r.used[i+1] {
			if two := r.voc.environments[st+" "+r.stems[i+1]]; len(two) > 0 {
				vals, n = two, 2
			}
		}
		if len(vals) == 0 || !livesAt(r, i, n) {
			continue
		}
		r.add(keywordFilter(badgerstore.FieldEnvironment, vals, r.negated(i, 2), r.mark(i, i+n)))
	}
}

// livesAt reports whether the question says a creature lives at the place
// words[i:i+n] name: a word saying so before it ("live in", "found in",
// "native to", "from the", "of the"), or a creature after it ("desert
// monsters", "forest predators", "swamp undead").
func livesAt(r *reading, i, n int) bool {
	for j := max(0, i-3); j < i; j++ {
		if livingWords[r.words[j]] {
			return true
		}
	}
	next := r.word(i + n)
	return creatureNouns[next] || dwellers[next] || r.voc.types[relevance.Stem(next)]
}

var (
	livingWords = map[string]bool{"live": true, "lives": true, "living": true, "lived": true, "found": true, "native": true,
		"inhabit": true, "inhabits": true, "inhabiting": true, "dwell": true, "dwells": true, "dwelling": true, "lurk": true,
		"lurks": true, "lurking": true, "roam": true, "roams": true, "roaming": true, "from": true, "of": true}
	dwellers = map[string]bool{"dweller": true, "dwellers": true, "denizen": true, "denizens": true, "predator": true,
		"predators": true, "inhabitant": true, "inhabitants": true, "encounter": true, "encounters": true}
)

// environmentWords are the words of an environment's key that say nothing
// alone ("plane", "or"), and ones other readings own ("material"
// components, "fire" damage).
var environmentWords = map[string]bool{"or": true, "the": true, "of": true, "plane": true, "material": true,
	"fire": true, "water": true, "air": true, "earth": true}

// environmentSynonyms are what players call the catalogue's environments.
var environmentSynonyms = map[string]string{
	"underdark": "underworld", "city": "urban", "cities": "urban", "town": "urban", "towns": "urban",
	"cave": "caves", "cavern": "caves", "caverns": "caves", "sea": "ocean", "seas": "ocean", "woods": "forest",
	"woodland": "forest", "woodlands": "forest", "crypt": "tomb", "crypts": "tomb", "graveyard": "tomb",
	"beach": "coast", "shore": "coast", "bog": "swamp", "bogs": "swamp", "fen": "swamp", "marshland": "marsh",
	"mountains": "mountain", "snow": "arctic", "frozen": "arctic", "plain": "plains",
}

// environmentVocabulary maps the stems of the words that say an
// environment ("swamp", "astral plane", "underdark") to the catalogue's
// environments they say.
func environmentVocabulary(v *badgerstore.View) map[string][]string {
	out := map[string][]string{}
	add := func(key, val string) {
		if !slices.Contains(out[key], val) {
			out[key] = append(out[key], val)
		}
	}
	v.Values(badgerstore.FieldEnvironment, func(val string, _ int) {
		words := strings.Split(val, "-")
		for i, w := range words {
			if environmentWords[w] {
				if w == "plane" && i > 0 && !environmentWords[words[i-1]] {
					add(relevance.Stem(words[i-1])+" "+relevance.Stem(w), val) // "astral plane"
				}
				continue
			}
			add(relevance.Stem(w), val)
		}
	})
	for syn, w := range environmentSynonyms {
		if vals := out[relevance.Stem(w)]; len(vals) > 0 {
			out[relevance.Stem(syn)] = vals
		}
	}
	return out
}

// environmentsSaid are the catalogue's environments a word or a key says
// ("swamp", "Swamp or Marsh", "swamp-or-marsh"), for the lookup's filter.
func environmentsSaid(voc *vocabulary, said string) []string {
	key := lkv1.Slugify(said)
	if slices.ContainsFunc(voc.environmentValues, func(v string) bool { return v == key }) {
		return []string{key}
	}
	var out []string
	for _, w := range strings.Split(key, "-") {
		for _, val := range voc.environments[relevance.Stem(w)] {
			if !slices.Contains(out, val) {
				out = append(out, val)
			}
		}
	}
	return out
}

package query

import (
	"slices"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// howItWorksReader reads a question about how the game works, asked of
// the rules among other kinds ("how does concentration work", "what
// happens when I drop to 0 hit points", "can I cast two spells in one
// turn", "rules for ..."): it asks for the rules, as "feats for a
// spellcaster" asks for feats: they rank first, the rest still follows.
// Not when it is mostly a name something else bears ("how does sneak
// attack work": the Rogue's feature). A name only the rules bear, theirs
// or a part's ("surprise", "heavy armor"), asks for them all the more.
// newReading finds the question's words; no other reader reads a filter
// in them (reading.add).
type howItWorksReader struct{}

func (howItWorksReader) facet() string { return "how-it-works" }

func (howItWorksReader) read(r *reading) {
	if !r.howItWorks {
		return
	}
	rules := lkv1.RuleKinds()
	othersNamed := slices.ContainsFunc(r.names, func(n string) bool {
		return bornBy(r.v, n, func(ks []lkv1.Kind) bool { return !slices.Contains(rules, ks[0]) && r.hasKinds(ks) })
	})
	if othersNamed {
		return
	}
	var slugs []string
	for _, k := range rules {
		if slices.Contains(r.kinds, k) {
			slugs = append(slugs, k.Slug())
		}
	}
	f := keywordFilter(badgerstore.FieldKind, slugs, false, r.howItWorksWords)
	f.by = r.by
	r.u.filters = append(r.u.filters, f)
}

// asksRule reports whether the question asks how the game works, and
// the words that say so (words[from:to]): "how does/do/is ... work",
// "what happens when/if", "what does ... mean", "how long does it take",
// "can I ...", the rules or mechanics of something.
func asksRule(words []string) (from, to int, ok bool) {
	framing := frame(words)
	for i, w := range words {
		switch {
		case framing[i] && (w == "mean" || w == "means" || w == "meaning" || w == "meant"):
			return 0, i + 1, true
		case w == "rule" || w == "rules" || w == "mechanic" || w == "mechanics":
			return i, i + 1, true
		case i == 1 && words[0] == "can" && (w == "i" || w == "my" || w == "we"):
			// "can I cast two spells in one turn": what a player may do.
			return 0, 2, true
		case w == "work" || w == "works":
			if words[0] == "how" && i > 1 {
				return 0, i + 1, true
			}
		case w == "happens" || w == "happen":
			if i > 0 && (words[i-1] == "what" || words[i-1] == "whats") {
				return i - 1, i + 1, true
			}
		case w == "take" && i >= 4:
			if words[i-4] == "how" && words[i-3] == "long" && words[i-1] == "it" {
				return i - 4, i + 1, true
			}
		}
	}
	return 0, 0, false
}

// definesRule reports whether the question asks what a rule's name
// means ("what is a bonus action", "what are opportunity attacks",
// "what's a saving throw"), and the name (words[from:to]): all that
// follows the asking words must be one stored name (names, at spans)
// that a rule bears. "What is a lich" asks for the creature, "what is the
// best spell" for no rule.
func definesRule(v *badgerstore.View, words, names []string, spans [][2]int) (from, to int, ok bool) {
	i := 0
	switch {
	case len(words) > 2 && words[0] == "what" && (words[1] == "is" || words[1] == "are"):
		i = 2
	case len(words) > 1 && words[0] == "whats":
		i = 1
	default:
		return 0, 0, false
	}
	if words[i] == "a" || words[i] == "an" || words[i] == "the" {
		i++
	}
	rules := lkv1.RuleKinds()
	for k, h := range spans {
		if h == [2]int{i, len(words)} && bornBy(v, names[k], func(ks []lkv1.Kind) bool { return slices.Contains(rules, ks[0]) }) {
			return i, len(words), true
		}
	}
	return 0, 0, false
}

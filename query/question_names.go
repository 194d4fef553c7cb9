package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// spellIn reports whether words name a spell, if spells are asked for.
func spellIn(v *badgerstore.View, words []string, hasKinds func([]lkv1.Kind) bool) bool {
	if !hasKinds([]lkv1.Kind{lkv1.Kind_KIND_SPELL}) {
		return false
	}
	spell := func(ks []lkv1.Kind) bool { return ks[0] == lkv1.Kind_KIND_SPELL && hasKinds(ks) }
	names, _ := storedNames(v, words, make([]bool, len(words)), spell)
	return slices.ContainsFunc(names, func(n string) bool { return bornBy(v, n, spell) })
}

// maxNamedWords bounds the names looked for in a question, in words.
const maxNamedWords = 4

// namedIn returns the stored names a question's words (those not read as
// filters) say (storedNames), when the question is mostly names ("what
// does Fireball do", "vampire weaknesses", "how does sneak attack work"):
// names inside a description ("a cross between an owl and a bear") are
// not what it asks for.
func namedIn(v *badgerstore.View, words []string, used []bool, hasKinds func([]lkv1.Kind) bool) (out []string, spans [][2]int) {
	out, spans = storedNames(v, words, used, hasKinds)
	n := 0
	for _, h := range spans {
		for i := h[0]; i < h[1]; i++ {
			if !stopword(words[i]) {
				n++
			}
		}
	}
	if 2*n < contentWords(words, used) {
		return nil, nil
	}
	return out, spans
}

// storedNames returns the stored names, entities' or their features'
// ("sneak attack"), that words not used say, longest first, and where
// each is in words.
func storedNames(v *badgerstore.View, words []string, used []bool, hasKinds func([]lkv1.Kind) bool) (out []string, spans [][2]int) {
	taken := make([]bool, len(words))
	// "fire damage" is damage of a type, not the damage type Fire and the
	// rule Damage (SRD 5.2's glossary has one) said side by side.
	for i := 0; i+1 < len(words); i++ {
		if words[i+1] == "damage" && slices.Contains(lkv1.DamageTypes(), words[i]) {
			taken[i], taken[i+1] = true, true
		}
	}
	for n := maxNamedWords; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) || slices.Contains(taken[i:i+n], true) || stopword(words[i]) || stopword(words[i+n-1]) {
				continue
			}
			if phrase, ok := storedName(v, words[i:i+n], hasKinds); ok {
				out = append(out, phrase)
				spans = append(spans, [2]int{i, i + n})
				for j := i; j < i+n; j++ {
					taken[j] = true
				}
			}
		}
	}
	return out, spans
}

// bornBy reports whether something of the kinds asked (has) bears a
// stored name (storedName), as its name or a feature's.
func bornBy(v *badgerstore.View, phrase string, has func([]lkv1.Kind) bool) bool {
	found := false
	for _, field := range []string{badgerstore.FieldName, badgerstore.FieldFeature} {
		v.Postings(field, phrase).Each(func(slot uint32) bool {
			found = has([]lkv1.Kind{v.Kind(slot)})
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// contentWords counts the words of a question that say what it asks: not
// used (nil: none is), not stop words, not asking words.
func contentWords(words []string, used []bool) int {
	n := 0
	for i, w := range words {
		if (used == nil || !used[i]) && !stopword(w) && !asking[w] {
			n++
		}
	}
	return n
}

// storedName returns the name, entity's or feature's, that words say, as
// stored: the words as they are, with one hyphen between two of them
// ("half orc" is Half-Orc: the question's words split at hyphens), or the
// last in the singular, if something of the kinds asked (hasKinds) bears
// that name.
func storedName(v *badgerstore.View, words []string, hasKinds func([]lkv1.Kind) bool) (string, bool) {
	has := func(name string) bool {
		return nameExists(v, name) || !v.Postings(badgerstore.FieldFeature, name).Empty()
	}
	phrase := strings.Join(words, " ")
	if has(phrase) {
		return phrase, true
	}
	for j := 1; j < len(words); j++ {
		hyphened := strings.Join(words[:j], " ") + "-" + strings.Join(words[j:], " ")
		if has(hyphened) {
			return hyphened, true
		}
	}
	// A plural is its singular's name ("owlbears": Owlbear), but for the
	// kinds' own nouns ("spells" asks for spells, not one named Spell);
	// so is a verb's "-s" ("blinks": Blink), so only a name of the kinds
	// asked counts.
	last := words[len(words)-1]
	if _, kind := kindNouns[last]; kind || !strings.HasSuffix(last, "s") {
		return "", false
	}
	head := strings.Join(words[:len(words)-1], " ")
	singulars := []string{last[:len(last)-1]}
	if sg, ok := strings.CutSuffix(last, "es"); ok {
		singulars = append(singulars, sg)
	}
	if sg, ok := strings.CutSuffix(last, "ies"); ok {
		singulars = append(singulars, sg+"y")
	}
	for _, sg := range singulars {
		if len(sg) < 3 {
			continue
		}
		if phrase := strings.TrimSpace(head + " " + sg); bornBy(v, phrase, hasKinds) { // its postings: no lookup before it
			return phrase, true
		}
	}
	return "", false
}

// asking are the question words BM25 keeps (its stop words hold "what",
// "which", "who", "when"), which say no more of what is asked than those:
// "how does rage work" is mostly the name "rage", "tell me about the
// longsword" the name "longsword".
var asking = map[string]bool{"how": true, "why": true, "where": true, "tell": true, "about": true, "explain": true, "describe": true,
	// What is asked of a named thing: "how much does a longsword cost",
	// "how much does plate armor weigh", "how many hit points does an ogre
	// have".
	"much": true, "many": true, "cost": true, "costs": true, "price": true, "weigh": true, "weighs": true}

// nameExists reports whether some entity is named name (lower-case),
// through the name trigrams: only the names with name's rarest trigram
// are compared.
func nameExists(v *badgerstore.View, name string) bool {
	r := []rune(" " + name + " ")
	if len(r) < 3 {
		return false
	}
	var rarest []uint32
	for i := 0; i+3 <= len(r); i++ {
		ids := v.NamesWithTrigram(string(r[i : i+3]))
		if i == 0 || len(ids) < len(rarest) {
			rarest = ids
		}
	}
	for _, id := range rarest {
		if v.NameOfID(id) == name {
			return true
		}
	}
	return false
}

// inCreatureName reports whether some creature's name contains phrase.
func inCreatureName(v *badgerstore.View, phrase string) bool {
	phrase = strings.TrimSpace(phrase)
	if !strings.Contains(phrase, " ") {
		return false
	}
	return v.Memo("creature-name\x00"+phrase, func() any {
		found := false
		for _, name := range relevance.NamesSharingTrigrams(v, phrase, 0) {
			if containsWords(name, phrase) { // whole words: "hydra dragon" holds no "a dragon"
				s := v.Postings(badgerstore.FieldName, name)
				s.Each(func(slot uint32) bool {
					found = v.Kind(slot) == lkv1.Kind_KIND_CREATURE
					return !found
				})
			}
			if found {
				break
			}
		}
		return found
	}).(bool)
}

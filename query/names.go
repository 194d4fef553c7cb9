package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Name match kinds, as LookupResponse.name_match reports them.
const (
	matchExact   = "exact"
	matchPattern = "pattern"
	matchSlug    = "slug"
	matchKey     = "key"
	// matchInflected: the same words but for their endings ("opportunity
	// attack" finds Opportunity Attacks).
	matchInflected = "inflection"
	// matchPart: no entity bears the name, but it heads a part of some
	// entities' text or names one of their features ("surprise": The
	// Order of Combat; "sneak attack": Rogue).
	matchPart = "part"
	// matchTag: the name with a glossary tag, in brackets or as words
	// ("Grappled [Condition]", "grappled condition", "dash action"): the
	// rules of that name in that family.
	matchTag = "tag"
)

// pattern is a name with "*" or "%" wildcards: any run of characters.
// Every other character is literal.
type pattern struct {
	parts []string // literal runs between wildcards, lower-case
	start bool     // the first part is anchored at the start
	end   bool     // the last part is anchored at the end
}

func isPattern(name string) bool { return strings.ContainsAny(name, "*%") }

func compilePattern(name string) pattern {
	name = strings.ToLower(name)
	raw := strings.FieldsFunc(name, func(r rune) bool { return r == '*' || r == '%' })
	return pattern{
		parts: raw,
		start: !strings.HasPrefix(name, "*") && !strings.HasPrefix(name, "%"),
		end:   !strings.HasSuffix(name, "*") && !strings.HasSuffix(name, "%"),
	}
}

// match reports whether the lower-case name s matches.
func (p pattern) match(s string) bool {
	parts := p.parts
	if len(parts) == 0 {
		return true // only wildcards
	}
	if p.start {
		if !strings.HasPrefix(s, parts[0]) {
			return false
		}
		s = s[len(parts[0]):]
		parts = parts[1:]
		if len(parts) == 0 {
			return !p.end || s == ""
		}
	}
	last := len(parts) - 1
	for i, part := range parts {
		if i == last && p.end {
			return strings.HasSuffix(s, part)
		}
		j := strings.Index(s, part)
		if j < 0 {
			return false
		}
		s = s[j+len(part):]
	}
	return true
}

// matchName narrows cand to the entities name matches: a case-insensitive
// exact name, a wildcard pattern, or, when no name matches, the same input
// as a slug, then as a key or the source's key. It returns how it matched
// ("" for nothing). For a pattern, limit > 0 stops at that many matches in
// name order.
func matchName(v *badgerstore.View, cand badgerstore.Set, name string, limit int) (badgerstore.Set, string) {
	name = strings.TrimSpace(name)
	if isPattern(name) {
		p := compilePattern(name)
		n := 0
		matched := make([]uint32, 0, 16)
		v.InNameOrder(cand, func(slot uint32) bool {
			if p.match(v.Name(slot)) {
				matched = append(matched, slot)
				n++
			}
			return limit <= 0 || n < limit
		})
		out := badgerstore.SetOf(matched...)
		return out, matchPattern
	}
	lower := strings.ToLower(name)
	try := func(field string, vals ...string) (badgerstore.Set, bool) {
		s := v.Postings(field, vals...)
		s.And(cand)
		return s, !s.Empty()
	}
	if s, ok := try(badgerstore.FieldName, lower); ok {
		return s, matchExact
	}
	if s, ok := try(badgerstore.FieldSlug, lower, strings.Join(strings.Fields(lower), "-")); ok {
		return s, matchSlug
	}
	if s, ok := try(badgerstore.FieldKey, lower); ok {
		return s, matchKey
	}
	if s, ok := try(badgerstore.FieldSourceKey, lower); ok {
		return s, matchKey
	}
	return badgerstore.Set{}, ""
}

// matchAnyName narrows cand to what name matches: by name, slug or key
// (matchName), else an alias (known: the name the books give), else
// another form of its words (matchInflection), else the entities holding
// a part or feature so named (partHolders). how says which; "" when nothing
// matched.
func matchAnyName(v *badgerstore.View, cand badgerstore.Set, name string) (_ badgerstore.Set, how, known string) {
	if s, how := matchName(v, cand, name, 0); how != "" {
		return s, how, ""
	}
	if s := matchTagged(v, cand, name); !s.Empty() {
		return s, matchTag, ""
	}
	if s, known := matchAliasName(v, cand, name); known != "" {
		return s, matchAlias, known
	}
	if s := matchInflection(v, cand, name); !s.Empty() {
		return s, matchInflected, ""
	}
	if s := partHolders(v, cand, name); !s.Empty() {
		return s, matchPart, ""
	}
	return badgerstore.Set{}, "", ""
}

// matchInflection narrows cand to the entities named as name is but for
// its words' endings ("opportunity attack": Opportunity Attacks; "giant
// spiders": Giant Spider): a name asked in the singular or the plural is
// the same name, never a guess, so it answers where a did-you-mean would
// only be offered. An empty set when none.
func matchInflection(v *badgerstore.View, cand badgerstore.Set, name string) badgerstore.Set {
	q := relevance.NormalizeName(name)
	if isPattern(name) || q == "" || len(q) > 2*MaxNameLength {
		return badgerstore.Set{}
	}
	want := strings.Fields(q)
	var out badgerstore.Set
	for _, n := range trigramNames(v, q) {
		// A name differing in case or punctuation only is not another
		// form of the words: matchName's to find, or nobody's.
		if nn := relevance.NormalizeName(n); nn != q && slices.EqualFunc(want, strings.Fields(nn), sameWord) {
			s := v.Postings(badgerstore.FieldName, n)
			s.And(cand)
			out.Or(s)
		}
	}
	return out
}

// sameWord reports whether a and b are one word in two forms: as
// relevance.Stem reduces them ("attacks", "attack"; "mercies", "mercy"),
// or one the other's plural ("ashes", "ash"; "axes", "axe"), which Stem
// leaves apart in short words.
func sameWord(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	return a == b || relevance.Stem(a) == relevance.Stem(b) || a == b+"s" || a == b+"es"
}

// trigramNames is relevance.NamesByTrigrams(v, q) with the did-you-mean
// bounds, remembered in v: a name that misses asks it for its other forms
// (matchInflection) and then for suggestions.
func trigramNames(v *badgerstore.View, q string) []string {
	return v.Memo("trigram-names\x00"+q, func() any {
		return relevance.NamesByTrigrams(v, q, relevance.SuggestDice, relevance.SuggestCandidates)
	}).([]string)
}

// partHolders narrows cand to the entities holding a part or feature named
// name (badgerstore.FieldFeature), but for a rule section of a book whose
// rule holds it too: the section holds its rules, and the rule is the
// part's own ("concentration" is SRD 5.1's Duration's, not Spellcasting's
// again).
func partHolders(v *badgerstore.View, cand badgerstore.Set, name string) badgerstore.Set {
	if isPattern(name) {
		return badgerstore.Set{}
	}
	s := v.Postings(badgerstore.FieldFeature, strings.ToLower(strings.TrimSpace(name)))
	s.And(cand)
	ruled := map[string]bool{} // documents with a rule holding it
	s.Each(func(slot uint32) bool {
		if v.Kind(slot) == lkv1.Kind_KIND_RULE {
			ruled[v.Document(slot).GetKey()] = true
		}
		return true
	})
	if len(ruled) == 0 {
		return s
	}
	var keep []uint32
	s.Each(func(slot uint32) bool {
		if v.Kind(slot) != lkv1.Kind_KIND_RULE_SECTION || !ruled[v.Document(slot).GetKey()] {
			keep = append(keep, slot)
		}
		return true
	})
	return badgerstore.SetOf(keep...)
}

// matchTagged narrows cand to the rules named as name is without its
// glossary tag (lkv1.SplitTag), in that tag's family: the rules the
// glossary tags so, and for "condition" every condition ("Grappled
// [Condition]" and "grappled condition" find SRD 5.2's Grappled and SRD
// 5.1's). An empty set when name carries no tag.
func matchTagged(v *badgerstore.View, cand badgerstore.Set, name string) badgerstore.Set {
	base, tag := lkv1.SplitTag(name)
	if tag == "" || isPattern(name) {
		return badgerstore.Set{}
	}
	family := v.Postings(badgerstore.FieldRuleCategory, strings.ToLower(tag))
	if strings.EqualFold(tag, "condition") {
		family.Or(v.Postings(badgerstore.FieldKind, lkv1.Kind_KIND_CONDITION.Slug()))
	}
	family.And(cand)
	if family.Empty() {
		return family
	}
	if s, how := matchName(v, family, base, 0); how != "" {
		return s
	}
	return matchInflection(v, family, base)
}

package query

import (
	"slices"
	"sort"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// reading is a question as its readers read it: its words, which of them
// a reader has taken, and what they found.
type reading struct {
	v     *badgerstore.View
	voc   *vocabulary
	kinds []lkv1.Kind
	// words are the question's words as read (chat spellings spelled out:
	// spelledOut), said as typed, for what a reading reports.
	words, said []string
	stems       []string
	// used marks the words a reader took; ordered those a superlative
	// took (they stay BM25 terms: the texts saying "armor class" are
	// those it orders).
	used, ordered []bool
	// held are the spans of the names the question mostly is: no filter
	// takes part of one (splits).
	held [][2]int
	// names are the stored names the question says, before any reader.
	names []string
	// howItWorks: the question asks how the game works, in
	// howItWorksWords (asksRule), of the rules among other kinds; its
	// other words are not read as filters.
	howItWorks      bool
	howItWorksWords string
	// party are the words saying a party's level ("level 8 party"), if any.
	party string
	// companion: the creature is wanted beside the party, not against it
	// (companionReader).
	companion bool
	// docSets are the documents each reading of a book or an edition
	// names, by the place of its first word; they narrow each other.
	docSets []docReading
	u       *understanding
	by      string // the facet of the reader at work
	span    [2]int // the words mark named last
}

// docReading is the documents words name, at word at.
type docReading struct {
	at    int
	keys  []string
	words string
	by    string // the reader's facet
}

// newReading splits q into words and finds what every reader needs first:
// the names it says and whether it asks how the game works. Nil: no word.
func newReading(v *badgerstore.View, q string, kinds []lkv1.Kind) *reading {
	said := questionWords(q)
	if len(said) == 0 {
		return nil
	}
	words := spelledOut(slices.Clone(said))
	r := &reading{v: v, voc: vocabularyOf(v), kinds: kinds, words: words, said: said, u: &understanding{},
		stems: make([]string, len(words)), used: make([]bool, len(words)), ordered: make([]bool, len(words))}
	for i, w := range words {
		r.stems[i] = relevance.Stem(w)
	}
	// A name of several words that the question mostly is, borne by
	// something of the kinds asked, keeps its words from the filters:
	// "how does two-weapon fighting work" asks for a rule, not weapons;
	// "destroy undead" for a feature, not undead. So does a name of one
	// word before the kind of what bears it: "the poisoned condition" is
	// a condition, not the poison category.
	names, spans := namedIn(v, words, r.used, r.hasKinds)
	r.names = names
	for i, h := range spans {
		switch k, ok := kindNoun(r.word(h[1])); {
		case h[1]-h[0] >= 2 && bornBy(v, names[i], r.hasKinds):
			r.held = append(r.held, h)
		case ok && bornBy(v, names[i], func(ks []lkv1.Kind) bool { return ks[0] == k && r.hasKinds(ks) }):
			r.held = append(r.held, [2]int{h[0], h[1] + 1})
		}
	}
	// A question about how the game works, asked of the rules and other
	// kinds, names what the rule is about, not what the answer must be:
	// "how does concentration work" wants the rule, not concentration
	// spells above it.
	rules := lkv1.RuleKinds()
	from, to, asks := asksRule(words)
	if !asks {
		from, to, asks = definesRule(v, words, names, spans)
	}
	r.howItWorksWords = strings.Join(r.said[from:to], " ")
	r.howItWorks = asks && r.hasKinds(rules) && slices.ContainsFunc(kinds, func(k lkv1.Kind) bool { return !slices.Contains(rules, k) })
	return r
}

// hasKinds reports whether the request covers one of ks.
func (r *reading) hasKinds(ks []lkv1.Kind) bool {
	for _, k := range r.kinds {
		if slices.Contains(ks, k) {
			return true
		}
	}
	return false
}

// has reports whether the request covers a kind holding field.
func (r *reading) has(field string) bool { return r.hasKinds(fieldKinds[field]) }

// hasRead reports whether a filter on field has been read already.
func (r *reading) hasRead(field string) bool {
	return slices.ContainsFunc(r.u.filters, func(f softFilter) bool { return f.field == field })
}

// word is the i-th word, or "" outside the question.
func (r *reading) word(i int) string {
	if i >= 0 && i < len(r.words) {
		return r.words[i]
	}
	return ""
}

// mark names the words a filter is read from; add takes them out of the
// question's other readings and its terms only if it keeps the filter:
// "legendary" of a lookup without creatures stays there to be read as a
// rarity, "concentration" of a rules lookup as a word.
func (r *reading) mark(from, to int) string {
	r.span = [2]int{from, to}
	return strings.Join(r.said[from:to], " ")
}

func (r *reading) take() {
	for i := r.span[0]; i < r.span[1]; i++ {
		r.used[i] = true
	}
}

// negated reports whether a negation is said within reach words before
// word i ("no stealth disadvantage"), taking it.
func (r *reading) negated(i, reach int) bool {
	for j := max(0, i-reach); j < i; j++ {
		if negations[r.words[j]] {
			r.used[j] = true
			return true
		}
	}
	return false
}

// splits reports whether words[from:to] would take part of a held name.
func (r *reading) splits(from, to int) bool {
	for _, h := range r.held {
		if from < h[1] && h[0] < to && (h[0] < from || to < h[1]) {
			return true
		}
	}
	return false
}

// add keeps a filter read from the words mark named last, if the request
// covers a kind holding its field, and takes the words.
func (r *reading) add(f softFilter) {
	if r.howItWorks || r.splits(r.span[0], r.span[1]) {
		return
	}
	// Said twice ("a giant ..., the weakest kind of giant"), a filter
	// counts once.
	for _, g := range r.u.filters {
		if g.field == f.field && g.report == f.report && g.negated == f.negated && slices.Equal(g.values, f.values) {
			r.take()
			return
		}
	}
	if r.has(f.field) {
		f.by = r.by
		r.u.filters = append(r.u.filters, f)
		r.take()
	}
}

// keep gives the words mark named last back to the terms and the other
// readers, after add took them: what a question wants done is said in the
// words of the texts and names that do it.
func (r *reading) keep() {
	for i := r.span[0]; i < r.span[1]; i++ {
		r.used[i] = false
	}
}

// addCompared adds the filter the number x of words[from:to] makes with
// the comparison around it, if any ("CR 10 or lower").
func (r *reading) addCompared(field string, x float64, from, to int) {
	b, from, to := compares(r.words, r.used, from, to)
	if b == exactly {
		r.add(numberFilter(field, x, r.mark(from, to)))
		return
	}
	if x, ok := inclusive(field, b, x); ok {
		r.add(rangeFilter(field, b, x, r.mark(from, to)))
	}
}

// addDocuments records the documents words[from:to] name (a book or an
// edition) and takes the words.
func (r *reading) addDocuments(keys []string, from, to int) {
	r.docSets = append(r.docSets, docReading{at: from, keys: keys, words: r.mark(from, to), by: r.by})
	r.take()
}

// setOrder keeps a superlative read from words[from:to].
func (r *reading) setOrder(o *ordering, from, to int) {
	o.by = r.by
	r.u.order = o
	for i := from; i < to; i++ {
		r.ordered[i] = r.ordered[i] || !r.used[i] // a filter's word stays the filter's
		r.used[i] = true
	}
}

// atSlot reports whether a level at word i is said of a named spell
// ("fireball at 5th level"): the slot it is cast with, not the spell's
// level.
func (r *reading) atSlot(i int) bool {
	return r.word(i-1) == "at" && spellIn(r.v, r.words, r.hasKinds)
}

// finish makes the understanding of what the readers found: the documents
// they name, the BM25 terms and the rest of the question for names. Nil:
// nothing understood.
func (r *reading) finish(q string) *understanding {
	u := r.u
	u.docs = combineDocuments(r.docSets)
	// A superlative restricts nothing: its words stay in the terms (the
	// texts saying "armor class" are those it orders), the kind's own
	// nouns ("spell") do not.
	var terms []string
	framing := frame(r.words)
	for i, w := range r.words {
		byFilters := r.used[i] && !r.ordered[i]
		if !byFilters && !framing[i] && (r.used[i] || !fillers[r.stems[i]] && !fillers[w]) {
			terms = append(terms, w)
		}
	}
	u.terms = strings.Join(terms, " ")
	if len(relevance.Tokenize(u.terms)) == 0 {
		// Nothing but filters ("fire damage"): the texts saying them most
		// rank first in their tier.
		u.terms = unframed(q, false)
	}
	var rest []string
	for i, w := range r.words {
		if !r.used[i] && !fillers[r.stems[i]] && !fillers[w] && !stopword(w) {
			rest = append(rest, w)
		}
	}
	u.rest = strings.Join(rest, " ")
	u.names, _ = namedIn(r.v, r.words, r.used, r.hasKinds)
	if len(u.filters) == 0 && len(u.docs) == 0 && u.order == nil && len(u.names) == 0 {
		return nil
	}
	return u
}

// combineDocuments narrows the documents of several readings by each
// other, in the question's order ("SRD 5.1": the SRDs, of which 5.1); two
// that share none are both asked for.
func combineDocuments(sets []docReading) []string {
	if len(sets) == 0 {
		return nil
	}
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].at < sets[j].at })
	docs := sets[0].keys
	for _, s := range sets[1:] {
		if both := slices.DeleteFunc(slices.Clone(docs), func(k string) bool { return !slices.Contains(s.keys, k) }); len(both) > 0 {
			docs = both
		} else {
			docs = append(docs, s.keys...)
		}
	}
	slices.Sort(docs)
	return slices.Compact(docs)
}

// fillers are left out of the rest besides stop words: the kinds' own
// nouns ("firbolt cantrip", "hold person spell").
var fillers = func() map[string]bool {
	m := map[string]bool{"monster": true, "monsters": true, "spells": true, "creatures": true, "weapons": true, "items": true}
	for _, k := range lkv1.Kinds() {
		m[strings.ReplaceAll(k.Slug(), "-", " ")] = true
	}
	return m
}()

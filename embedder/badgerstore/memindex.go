package badgerstore

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"lorekeeper.dev/embedder"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// memIndex is the in-memory index over the stored entities, built at Open
// from Badger and maintained by Apply. Queries answer every filter from it
// and read from Badger only the entities they return.
type memIndex struct {
	slots  []slotInfo
	free   []uint32
	bySlot map[string]uint32 // entity key -> slot
	live   Set

	postings map[string]*Set // field "\x00" value -> slots
	columns  map[string][]numEntry
	order    []uint32 // live slots in name order
	rank     []uint32 // slot -> position in order

	// BM25 over embedder.Text, lower-cased.
	terms     map[string][]termPosting
	totalLen  int
	names     map[string]int      // distinct lower-case name -> entities
	trigrams  map[string][]string // trigram -> distinct names
	vectors   int
	dirtyCols bool
	vocab     []string // the terms, sorted, for prefix expansion
	// docsByName maps a lower-case document name or display name to the
	// lower-case keys of the documents so called.
	docsByName map[string][]string
}

type slotInfo struct {
	key        string
	lname      string
	kind       lkv1.Kind
	doc        string // lower-case document key
	source     lkv1.Source
	gameSystem string
	postings   []string
	numbers    map[string]float64
	terms      []string // distinct
	docLen     int
	// dims is the length of the entity's vector, 0 without one. The
	// vectors themselves live in the vector index, the one place they are
	// searched.
	dims     int
	document *lkv1.Document
}

type numEntry struct {
	v    float64
	slot uint32
}

type termPosting struct {
	slot uint32
	tf   uint16
}

func newMemIndex() *memIndex {
	return &memIndex{
		bySlot:   map[string]uint32{},
		postings: map[string]*Set{},
		columns:  map[string][]numEntry{},
		terms:    map[string][]termPosting{},
		names:    map[string]int{},
		trigrams: map[string][]string{},
	}
}

func postingKey(field, value string) string { return field + "\x00" + value }

// put indexes e (replacing what was indexed under its key) with vector vec
// (nil: keep none).
func (m *memIndex) put(e *lkv1.Entity, vec []float32) {
	m.remove(e.GetKey())
	var slot uint32
	if n := len(m.free); n > 0 {
		slot = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		slot = uint32(len(m.slots))
		m.slots = append(m.slots, slotInfo{})
	}
	f := EntityFields(e)
	si := slotInfo{
		key:        e.GetKey(),
		lname:      strings.ToLower(e.GetName()),
		kind:       e.GetKind(),
		doc:        strings.ToLower(e.GetDocument().GetKey()),
		source:     e.GetDocument().GetSource(),
		gameSystem: strings.ToLower(e.GetDocument().GetGameSystem()),
		numbers:    f.Numbers,
		document:   e.GetDocument(),
	}
	for field, vals := range f.Keywords {
		for _, v := range vals {
			si.postings = append(si.postings, postingKey(field, v))
		}
	}
	for field, v := range f.Bools {
		si.postings = append(si.postings, postingKey(field, boolValue(v)))
	}
	for _, pk := range si.postings {
		s := m.postings[pk]
		if s == nil {
			s = &Set{}
			m.postings[pk] = s
		}
		s.add(slot)
	}
	// BM25 terms.
	tf := map[string]int{}
	// The name counts twice: a query naming a thing should find it first.
	toks := Tokenize(embedder.Text(e, true))
	for _, t := range toks {
		tf[t]++
	}
	si.docLen = len(toks)
	m.totalLen += si.docLen
	for t, n := range tf {
		si.terms = append(si.terms, t)
		m.terms[t] = append(m.terms[t], termPosting{slot: slot, tf: uint16(min(n, math.MaxUint16))})
	}
	if len(vec) > 0 {
		si.dims = len(vec)
		m.vectors++
	}
	if m.names[si.lname] == 0 {
		for _, g := range trigramsOf(si.lname) {
			m.trigrams[g] = append(m.trigrams[g], si.lname)
		}
	}
	m.names[si.lname]++
	m.slots[slot] = si
	m.bySlot[si.key] = slot
	m.live.add(slot)
	m.dirtyCols = true
}

func (m *memIndex) remove(key string) {
	slot, ok := m.bySlot[key]
	if !ok {
		return
	}
	si := &m.slots[slot]
	for _, pk := range si.postings {
		if s := m.postings[pk]; s != nil {
			s.remove(slot)
			if s.Empty() {
				delete(m.postings, pk)
			}
		}
	}
	for _, t := range si.terms {
		ps := m.terms[t]
		ps = slices.DeleteFunc(ps, func(p termPosting) bool { return p.slot == slot })
		if len(ps) == 0 {
			delete(m.terms, t)
		} else {
			m.terms[t] = ps
		}
	}
	m.totalLen -= si.docLen
	if si.dims > 0 {
		m.vectors--
	}
	m.names[si.lname]--
	if m.names[si.lname] <= 0 {
		delete(m.names, si.lname)
		for _, g := range trigramsOf(si.lname) {
			m.trigrams[g] = slices.DeleteFunc(m.trigrams[g], func(n string) bool { return n == si.lname })
			if len(m.trigrams[g]) == 0 {
				delete(m.trigrams, g)
			}
		}
	}
	delete(m.bySlot, key)
	m.live.remove(slot)
	m.slots[slot] = slotInfo{}
	m.free = append(m.free, slot)
	m.dirtyCols = true
}

// finish rebuilds the sorted numeric columns and the name order after a
// batch of puts and removes.
func (m *memIndex) finish() {
	if !m.dirtyCols {
		return
	}
	m.dirtyCols = false
	cols := map[string][]numEntry{}
	order := make([]uint32, 0, len(m.bySlot))
	m.live.Each(func(slot uint32) bool {
		order = append(order, slot)
		for f, v := range m.slots[slot].numbers {
			cols[f] = append(cols[f], numEntry{v: v, slot: slot})
		}
		return true
	})
	for _, c := range cols {
		slices.SortFunc(c, func(a, b numEntry) int {
			if a.v != b.v {
				if a.v < b.v {
					return -1
				}
				return 1
			}
			return int(a.slot) - int(b.slot)
		})
	}
	m.columns = cols
	slices.SortFunc(order, func(a, b uint32) int {
		sa, sb := &m.slots[a], &m.slots[b]
		if c := strings.Compare(sa.lname, sb.lname); c != 0 {
			return c
		}
		if c := docRank(sa) - docRank(sb); c != 0 {
			return c
		}
		return strings.Compare(sa.key, sb.key)
	})
	m.order = order
	m.vocab = m.vocab[:0]
	for t := range m.terms {
		m.vocab = append(m.vocab, t)
	}
	slices.Sort(m.vocab)
	m.docsByName = map[string][]string{}
	seen := map[string]bool{}
	for _, s := range order {
		si := &m.slots[s]
		if seen[si.source.Slug()+"/"+si.doc] {
			continue
		}
		seen[si.source.Slug()+"/"+si.doc] = true
		for _, n := range []string{si.document.GetName(), si.document.GetDisplayName()} {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" && !slices.Contains(m.docsByName[n], si.doc) {
				m.docsByName[n] = append(m.docsByName[n], si.doc)
			}
		}
	}
	m.rank = make([]uint32, len(m.slots))
	for i, s := range order {
		m.rank[s] = uint32(i)
	}
}

// docRank orders same-named entities: the 2014 SRD, then the 2024 SRD, then
// the other Open5e documents, then homebrew.
func docRank(s *slotInfo) int {
	switch {
	case s.doc == "srd-2014" || s.doc == "wotc-srd":
		return 0
	case s.doc == "srd-2024":
		return 1
	case s.source == lkv1.Source_SOURCE_ORCBREW:
		return 3
	}
	return 2
}

// stopwords are left out of BM25: they match nearly every text.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "for": true, "from": true, "has": true, "have": true, "i": true, "if": true,
	"in": true, "into": true, "is": true, "it": true, "its": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "their": true, "them": true, "this": true, "to": true, "was": true,
	"what": true, "when": true, "which": true, "who": true, "with": true, "you": true, "your": true,
	"does": true, "do": true, "me": true, "my": true,
}

// Tokenize splits text into the lower-case BM25 terms the store indexes:
// letters and digits, stop words dropped, a plural "s" stemmed.
func Tokenize(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if stopwords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem is a light suffix stripper (a small part of Porter's): enough for
// "heal", "heals", "healing" and "healed", or "regenerates" and
// "regeneration", to meet.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ation", "iest", "ion", "ing", "ed", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			w = w[:len(w)-len(suf)]
			switch suf {
			case "ation":
				w += "at" // "regeneration" meets "regenerates"
			case "iest":
				w += "y" // "heaviest" meets "heavy"
			}
			break
		}
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func trigramsOf(s string) []string {
	r := []rune(" " + s + " ")
	if len(r) < 3 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		g := string(r[i : i+3])
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

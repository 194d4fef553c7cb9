package badgerstore

import (
	"math"
	"slices"
	"strings"

	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// memIndex is the in-memory index over the stored entities, built at Open
// from Badger and maintained by Apply. Queries answer every filter from it
// and read from Badger only the entities they return.
type memIndex struct {
	slots []slotInfo
	refs  []SlotRef // by slot
	// docLens are the slots' BM25 document lengths: read for every slot
	// of a query term's postings, a dense array rather than the slots'
	// records (a cache miss each, a third of BM25 at 46,000 entities).
	docLens []uint32
	free    []uint32
	bySlot  map[string]uint32 // entity key -> slot
	live    Set

	postings map[string]*posting // field "\x00" value -> slots
	columns  map[string][]numEntry
	order    []uint32 // live slots in name order
	rank     []uint32 // slot -> position in order

	// BM25 postings (relevance.Terms) and name trigrams; the relevance
	// package scores them.
	terms map[string][]relevance.Posting
	// termIDs and termList intern the BM25 terms: a slot lists its terms
	// by ID (see slotInfo.terms). A term keeps its ID once given, so the
	// dictionary grows with the vocabulary ever indexed, not with writes.
	termIDs  map[string]uint32
	termList []string
	// numFieldIDs and numFields intern the numeric fields' names.
	numFieldIDs map[string]uint32
	numFields   []string
	totalLen    int
	names       map[string]int      // distinct lower-case name -> entities
	trigrams    map[string][]uint32 // trigram -> IDs of distinct names
	nameIDs     map[string]uint32   // distinct lower-case name -> ID (kept once given)
	nameList    []string            // ID -> name
	vectors     int
	dirtyCols   bool
	vocab       []string // the terms, sorted, for prefix expansion
	rvocab      []string // the terms spelt backwards, sorted, for suffix expansion
	// values counts the entities holding each value of the fields a user
	// picks from (creature types, environments, documents), for completion.
	values map[string]map[string]int
	// docsByName maps a lower-case document name or display name to the
	// lower-case keys of the documents so called.
	docsByName map[string][]string
	// docs and kinds count the entities per document and per kind, kept
	// on every put and remove: listing documents costs the documents, not
	// a walk over every entity.
	docs  map[docID]*docCounts
	kinds map[lkv1.Kind]int
}

// docID tells documents apart: a key used by two sources (v1 and v2
// "tob") is two documents.
type docID struct {
	source lkv1.Source
	key    string // lower-case
}

type docCounts struct {
	document *lkv1.Document // as its latest entity carries it
	entities int
	kinds    map[lkv1.Kind]int
}

// SlotRef is what ranking reads of every candidate, kept apart from the
// rest of slotInfo in one small array so that reading it for thousands of
// candidates stays in cache.
type SlotRef struct {
	Kind   lkv1.Kind
	NameID uint32 // the ID of the name in reading order (View.NameOfID)
	// Gen changes whenever the slot is freed: a slot remembered with its
	// generation still holds the same entity (or a rewrite of it) while
	// the two agree.
	Gen uint32
}

type slotInfo struct {
	key   string
	name  string // as the source writes it
	lname string // lower-case, as written
	// sname is lname in reading order (relevance.ReadingOrder): the name
	// the entity is known by across books, so that SRD 5.1's "Crossbow,
	// light" and SRD 5.2's "Light Crossbow" are one name. Name IDs, name
	// trigrams and name order are of it.
	sname      string
	nameID     uint32 // sname's ID (memIndex.nameIDs)
	kind       lkv1.Kind
	doc        string // lower-case document key
	source     lkv1.Source
	gameSystem string
	postings   []*posting
	numbers    []numValue
	// terms are the distinct BM25 terms, by ID (memIndex.termList): not
	// the strings, which are pieces of the entity's lower-cased text and
	// kept all of it alive, 80-odd string headers each for the collector
	// to walk (at 49,790 entities about 100 MB, a third of the live heap).
	terms  []uint32
	docLen int
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

// numValue is one of a slot's numeric fields (memIndex.numFields).
type numValue struct {
	field uint32
	v     float64
}

func newMemIndex() *memIndex {
	return &memIndex{
		bySlot:      map[string]uint32{},
		postings:    map[string]*posting{},
		columns:     map[string][]numEntry{},
		terms:       map[string][]relevance.Posting{},
		termIDs:     map[string]uint32{},
		numFieldIDs: map[string]uint32{},
		names:       map[string]int{},
		trigrams:    map[string][]uint32{},
		nameIDs:     map[string]uint32{},
		values:      map[string]map[string]int{},
		docs:        map[docID]*docCounts{},
		kinds:       map[lkv1.Kind]int{},
	}
}

// enumerated are the keyword fields whose distinct values are kept: the
// catalogue's own vocabulary, which queries are read against, and the
// parts' and features' names, which name completion offers.
var enumerated = map[string]bool{FieldCreatureType: true, FieldEnvironment: true, FieldDocument: true,
	FieldSize: true, FieldSchool: true, FieldClass: true, FieldDamageType: true, FieldProperty: true,
	FieldArmorCategory: true, FieldCastingTime: true, FieldCategory: true, FieldRarity: true, FieldMovement: true,
	FieldFeature: true}

// countValue adds d to the count of pk's value if its field is enumerated.
func (m *memIndex) countValue(pk string, d int) {
	field, val, _ := strings.Cut(pk, "\x00")
	if !enumerated[field] || val == "" {
		return
	}
	vals := m.values[field]
	if vals == nil {
		vals = map[string]int{}
		m.values[field] = vals
	}
	if vals[val] += d; vals[val] <= 0 {
		delete(vals, val)
	}
}

func postingKey(field, value string) string { return field + "\x00" + value }

// posting returns the posting of pk, made empty if there is none: the
// entities holding a value share its one key string.
func (m *memIndex) posting(pk string) *posting {
	p := m.postings[pk]
	if p == nil {
		p = &posting{key: pk}
		m.postings[pk] = p
	}
	return p
}

// prepared is what indexing an entity derives from the entity alone, apart
// from the index: a load prepares entities in parallel and puts them in
// the index one at a time.
type prepared struct {
	fields Fields
	terms  []string // distinct BM25 terms (relevance.Terms)
	tfs    []uint16 // each term's count
	docLen int
}

func prepare(e *lkv1.Entity) prepared {
	p := prepared{fields: EntityFields(e)}
	toks := relevance.Terms(e)
	p.docLen = relevance.DocLen(toks)
	// Distinct terms and counts by sorting: a map per entity costs more.
	slices.Sort(toks)
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[i] {
			j++
		}
		p.terms = append(p.terms, toks[i])
		p.tfs = append(p.tfs, uint16(min(j-i, math.MaxUint16)))
		i = j
	}
	return p
}

// put indexes e (replacing what was indexed under its key) with vector vec
// (nil: keep none).
func (m *memIndex) put(e *lkv1.Entity, vec []float32) {
	m.putPrepared(e, vec, prepare(e))
}

// putPrepared is put with what prepare derived from e.
func (m *memIndex) putPrepared(e *lkv1.Entity, vec []float32, p prepared) {
	// An entity written again keeps its slot and generation: a ranked
	// page kept by slot still finds it.
	slot, had := m.bySlot[e.GetKey()]
	switch {
	case had:
		m.unindex(slot)
	case len(m.free) > 0:
		slot = m.free[len(m.free)-1]
		m.free = m.free[:len(m.free)-1]
	default:
		slot = uint32(len(m.slots))
		m.slots = append(m.slots, slotInfo{})
		m.refs = append(m.refs, SlotRef{})
		m.docLens = append(m.docLens, 0)
	}
	f := p.fields
	si := slotInfo{
		key:        e.GetKey(),
		name:       e.GetName(),
		lname:      strings.ToLower(e.GetName()),
		kind:       e.GetKind(),
		doc:        strings.ToLower(e.GetDocument().GetKey()),
		source:     e.GetDocument().GetSource(),
		gameSystem: strings.ToLower(e.GetDocument().GetGameSystem()),
		document:   e.GetDocument(),
	}
	for field, v := range f.Numbers {
		id, ok := m.numFieldIDs[field]
		if !ok {
			id = uint32(len(m.numFields))
			field = strings.Clone(field)
			m.numFieldIDs[field] = id
			m.numFields = append(m.numFields, field)
		}
		si.numbers = append(si.numbers, numValue{id, v})
	}
	for field, vals := range f.Keywords {
		for _, v := range vals {
			si.postings = append(si.postings, m.posting(postingKey(field, v)))
		}
	}
	for field, v := range f.Bools {
		si.postings = append(si.postings, m.posting(postingKey(field, boolValue(v))))
	}
	for _, pst := range si.postings {
		pst.add(slot)
		m.countValue(pst.key, 1)
	}
	// BM25 terms.
	si.docLen = p.docLen
	m.docLens[slot] = uint32(si.docLen)
	m.totalLen += si.docLen
	si.terms = make([]uint32, len(p.terms))
	for i, t := range p.terms {
		id, ok := m.termIDs[t]
		if !ok {
			id = uint32(len(m.termList))
			t = strings.Clone(t) // not a piece of the entity's text
			m.termIDs[t] = id
			m.termList = append(m.termList, t)
		}
		si.terms[i] = id
		t = m.termList[id]
		m.terms[t] = append(m.terms[t], relevance.Posting{Slot: slot, TF: p.tfs[i]})
	}
	if len(vec) > 0 {
		si.dims = len(vec)
		m.vectors++
	}
	si.sname = si.lname
	if r := relevance.ReadingOrder(si.lname); r != si.lname {
		si.sname = r
	}
	id, ok := m.nameIDs[si.sname]
	if !ok {
		id = uint32(len(m.nameList))
		m.nameIDs[si.sname] = id
		m.nameList = append(m.nameList, si.sname)
	}
	si.nameID = id
	if m.names[si.sname] == 0 {
		for _, g := range relevance.Trigrams(si.sname) {
			m.trigrams[g] = append(m.trigrams[g], id)
		}
	}
	m.names[si.sname]++
	m.count(&si, 1)
	m.slots[slot] = si
	m.refs[slot].Kind, m.refs[slot].NameID = si.kind, si.nameID
	m.bySlot[si.key] = slot
	m.live.add(slot)
	m.dirtyCols = true
}

// remove drops the entity with key and frees its slot for another,
// under a new generation.
func (m *memIndex) remove(key string) {
	slot, ok := m.bySlot[key]
	if !ok {
		return
	}
	m.unindex(slot)
	m.free = append(m.free, slot)
	m.refs[slot] = SlotRef{Gen: m.refs[slot].Gen + 1}
}

// unindex takes the entity in slot out of every index, leaving the slot
// empty.
func (m *memIndex) unindex(slot uint32) {
	si := &m.slots[slot]
	key := si.key
	for _, p := range si.postings {
		p.remove(slot)
		if p.empty() {
			delete(m.postings, p.key)
		}
		m.countValue(p.key, -1)
	}
	for _, id := range si.terms {
		t := m.termList[id]
		ps := m.terms[t]
		ps = slices.DeleteFunc(ps, func(p relevance.Posting) bool { return p.Slot == slot })
		if len(ps) == 0 {
			delete(m.terms, t)
		} else {
			m.terms[t] = ps
		}
	}
	m.totalLen -= si.docLen
	m.docLens[slot] = 0
	if si.dims > 0 {
		m.vectors--
	}
	m.names[si.sname]--
	if m.names[si.sname] <= 0 {
		delete(m.names, si.sname)
		for _, g := range relevance.Trigrams(si.sname) {
			id := m.nameIDs[si.sname]
			m.trigrams[g] = slices.DeleteFunc(m.trigrams[g], func(n uint32) bool { return n == id })
			if len(m.trigrams[g]) == 0 {
				delete(m.trigrams, g)
			}
		}
	}
	m.count(si, -1)
	delete(m.bySlot, key)
	m.live.remove(slot)
	m.slots[slot] = slotInfo{}
	m.dirtyCols = true
}

// count adds d to the counts of si's document and kind.
func (m *memIndex) count(si *slotInfo, d int) {
	id := docID{si.source, si.doc}
	dc := m.docs[id]
	if dc == nil {
		dc = &docCounts{kinds: map[lkv1.Kind]int{}}
		m.docs[id] = dc
	}
	if d > 0 {
		dc.document = si.document
	}
	dc.entities += d
	if dc.kinds[si.kind] += d; dc.kinds[si.kind] <= 0 {
		delete(dc.kinds, si.kind)
	}
	if dc.entities <= 0 {
		delete(m.docs, id)
	}
	if m.kinds[si.kind] += d; m.kinds[si.kind] <= 0 {
		delete(m.kinds, si.kind)
	}
}

// finish rebuilds the sorted numeric columns and the name order after
// puts and removes (the first View after them calls it).
func (m *memIndex) finish() {
	if !m.dirtyCols {
		return
	}
	m.dirtyCols = false
	cols := map[string][]numEntry{}
	order := make([]uint32, 0, len(m.bySlot))
	m.live.Each(func(slot uint32) bool {
		order = append(order, slot)
		for _, n := range m.slots[slot].numbers {
			f := m.numFields[n.field]
			cols[f] = append(cols[f], numEntry{v: n.v, slot: slot})
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
		return orderKeyOf(&m.slots[a]).compare(orderKeyOf(&m.slots[b]))
	})
	m.order = order
	m.vocab = m.vocab[:0]
	for t := range m.terms {
		m.vocab = append(m.vocab, t)
	}
	slices.Sort(m.vocab)
	m.rvocab = m.rvocab[:0]
	for _, t := range m.vocab {
		m.rvocab = append(m.rvocab, relevance.Reverse(t))
	}
	slices.Sort(m.rvocab)
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

// OrderKey is an entity's place in name order: its lower-case name in
// reading order (the copies of a name in every book follow each other), then
// its document's rank, then its key. It is a pure function of the entity,
// so it holds its place whatever else is written: a page cursor.
type OrderKey struct {
	Name    string
	DocRank int
	Key     string
}

func orderKeyOf(s *slotInfo) OrderKey {
	return OrderKey{Name: s.sname, DocRank: docRank(s), Key: s.key}
}

func (a OrderKey) compare(b OrderKey) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if a.DocRank != b.DocRank {
		return a.DocRank - b.DocRank
	}
	return strings.Compare(a.Key, b.Key)
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

package badgerstore

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// View is a consistent read of the store: the in-memory index does not
// change while it is open, and entities are read from one Badger snapshot.
// It is valid only inside the function given to Store.View.
type View struct {
	s   *Store
	m   *memIndex
	txn *badger.Txn
}

// maxLoadWait is how long a view waits for a background load
// (Options.LoadInBackground) before it says the index is still loading:
// a restart's first question is answered once the index is built, seconds
// later, instead of failing, unless the load takes longer than that.
const maxLoadWait = 8 * time.Second

// waitLoaded waits for the in-memory index, at most maxLoadWait and
// within ctx's deadline, and returns loadState.
func (s *Store) waitLoaded(ctx context.Context) error {
	select {
	case <-s.loaded:
		return s.loadState()
	default:
	}
	wait := maxLoadWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)*9/10)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.loaded:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.loadState()
}

// View calls fn with a consistent read of the store. Writers wait while it
// runs, so fn should not block on anything slow (embed a query first).
func (s *Store) View(ctx context.Context, fn func(v *View) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.waitLoaded(ctx); err != nil {
		return err
	}
	s.mu.RLock()
	for s.mem.dirtyCols && !s.closed {
		// Writes left the sorted structures (name order, numeric columns,
		// vocabulary) to rebuild: the first view after them does it, once
		// for however many write batches came between two views (a load
		// applies hundreds).
		s.mu.RUnlock()
		s.mu.Lock()
		s.mem.finish()
		s.mu.Unlock()
		s.mu.RLock()
	}
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	txn := s.db.Load().NewTransaction(false)
	defer txn.Discard()
	return fn(&View{s: s, m: s.mem, txn: txn})
}

// Writes counts the write batches applied before the view: two views with
// the same count see the same entities in the same slots.
func (v *View) Writes() uint64 { return v.s.writes }

// Memo returns the value remembered under key, computing it with fn the
// first time: for values derived from the in-memory index alone (a query
// text's near names, say), which stay valid until the next write. Apply
// forgets them all. Callers must not modify a remembered value.
func (v *View) Memo(key string, fn func() any) any {
	if x, ok := v.s.memo.get(key); ok {
		return x
	}
	x := fn()
	v.s.memo.put(key, x)
	return x
}

// maxMemo bounds the remembered values: past it they are all forgotten.
const maxMemo = 1024

// memo holds View.Memo's values. Views read and fill it concurrently under
// the store's read lock; Apply clears it under the write lock.
type memo struct {
	mu sync.Mutex
	m  map[string]any
}

func (c *memo) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.m[key]
	return x, ok
}

func (c *memo) put(key string, x any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMemo {
		c.m = map[string]any{}
	}
	c.m[key] = x
}

func (c *memo) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// All returns every stored entity's slot.
func (v *View) All() Set { return v.m.live.Clone() }

// Capacity bounds every slot number: slots are below it.
func (v *View) Capacity() int { return len(v.m.slots) }

// Postings returns the slots whose field holds any of values (lower-cased
// here).
func (v *View) Postings(field string, values ...string) Set {
	// As long as its highest member, not the store: a name's posting is a
	// few slots, asked for every result of a page.
	var out Set
	for _, val := range values {
		if p := v.m.postings[postingKey(field, strings.ToLower(strings.TrimSpace(val)))]; p != nil {
			p.orInto(&out)
		}
	}
	return out
}

// Range returns the slots whose number field lies in [min, max]; a nil
// bound is open. Entities without the field are not in it.
func (v *View) Range(field string, from, to *float64) Set {
	out := newSet(len(v.m.slots))
	col := v.m.columns[field]
	lo := 0
	if from != nil {
		lo = sort.Search(len(col), func(i int) bool { return col[i].v >= *from })
	}
	for i := lo; i < len(col); i++ {
		if to != nil && col[i].v > *to {
			break
		}
		out.add(col[i].slot)
	}
	return out
}

// Slot returns the slot of the entity with key.
func (v *View) Slot(key string) (uint32, bool) {
	s, ok := v.m.bySlot[key]
	return s, ok
}

// Key returns the entity key in slot.
func (v *View) Key(slot uint32) string { return v.m.slots[slot].key }

// Name returns the lower-case name in slot, as written.
func (v *View) Name(slot uint32) string { return v.m.slots[slot].lname }

// NameKey returns the name slot is known by across books: its lower-case
// name in reading order (relevance.ReadingOrder), what NameID identifies
// and name order sorts by.
func (v *View) NameKey(slot uint32) string { return v.m.slots[slot].sname }

// DisplayName returns the name in slot as the entity spells it.
func (v *View) DisplayName(slot uint32) string { return v.m.slots[slot].name }

// Ref returns what ranking reads of slot: its kind, name ID and
// generation.
func (v *View) Ref(slot uint32) SlotRef { return v.m.refs[slot] }

// Kind returns the kind in slot.
func (v *View) Kind(slot uint32) lkv1.Kind { return v.m.refs[slot].Kind }

// Document returns the document of the entity in slot.
func (v *View) Document(slot uint32) *lkv1.Document { return v.m.slots[slot].document }

// InNameOrder calls fn with the slots of set in name order (then the SRD
// before other documents) until fn returns false.
func (v *View) InNameOrder(set Set, fn func(slot uint32) bool) {
	n := set.Len()
	if n == 0 {
		return
	}
	// Few candidates: sort them by rank; many: walk the global order.
	if n*8 < len(v.m.order) {
		slots := make([]uint32, 0, n)
		set.Each(func(s uint32) bool { slots = append(slots, s); return true })
		sort.Slice(slots, func(i, j int) bool { return v.m.rank[slots[i]] < v.m.rank[slots[j]] })
		for _, s := range slots {
			if !fn(s) {
				return
			}
		}
		return
	}
	for _, s := range v.m.order {
		if set.Has(s) && !fn(s) {
			return
		}
	}
}

// OrderKey returns slot's place in name order.
func (v *View) OrderKey(slot uint32) OrderKey { return orderKeyOf(&v.m.slots[slot]) }

// After removes from set the slots at or before k in name order, so a walk
// in name order resumes past k. It costs one comparison per slot in set.
func (v *View) After(set *Set, k OrderKey) {
	set.Each(func(s uint32) bool {
		if orderKeyOf(&v.m.slots[s]).compare(k) <= 0 {
			set.remove(s)
		}
		return true
	})
}

// InOrder calls fn with every live slot in name order until fn returns
// false.
func (v *View) InOrder(fn func(slot uint32) bool) {
	for _, s := range v.m.order {
		if !fn(s) {
			return
		}
	}
}

// Values calls fn with each distinct value of an enumerated keyword field
// (FieldCreatureType, FieldSize, FieldProperty, FieldDocument, ...: see
// enumerated) and how many
// entities hold it, in no order.
func (v *View) Values(field string, fn func(value string, entities int)) {
	for val, n := range v.m.values[field] {
		fn(val, n)
	}
}

// Entity reads the entity in slot from Badger, without its source record.
// The entity may be shared with other readers: do not modify it.
func (v *View) Entity(slot uint32) (*lkv1.Entity, error) {
	v.s.reads.Add(1)
	key := v.m.slots[slot].key
	if e := v.s.ents.get(key); e != nil {
		return e, nil
	}
	e := &lkv1.Entity{}
	if err := readEntity(v.txn, key, e); err != nil {
		return nil, err
	}
	// Results leave out the source's own record: it is the largest field
	// (the raw JSON is often as big as the rest), no result shows it, and
	// every result would carry it through gRPC and the cache. Store.Get
	// and EntityByKey return it.
	e.SourceRecord = nil
	v.s.ents.put(key, e)
	return e, nil
}

// EntityByKey reads the entity with key from Badger, or ErrNotFound.
func (v *View) EntityByKey(key string) (*lkv1.Entity, error) {
	v.s.reads.Add(1)
	e := &lkv1.Entity{}
	if err := readEntity(v.txn, key, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Names calls fn with every distinct lower-case name until fn returns
// false.
func (v *View) Names(fn func(name string) bool) {
	for n := range v.m.names {
		if !fn(n) {
			return
		}
	}
}

// The view is the relevance package's index: BM25 postings and name
// trigrams. Scoring is relevance's; the view only reads.
var (
	_ relevance.Postings     = (*View)(nil)
	_ relevance.TrigramIndex = (*View)(nil)
)

// DocCount is the number of stored entities.
func (v *View) DocCount() int { return len(v.m.bySlot) }

// TotalLen is the sum of the entities' lengths in BM25 terms.
func (v *View) TotalLen() int { return v.m.totalLen }

// TermPostings returns the entities containing the BM25 term. The slice is
// the index's own: do not modify it.
func (v *View) TermPostings(term string) []relevance.Posting { return v.m.terms[term] }

// DocLen is the length in BM25 terms of the entity in slot.
func (v *View) DocLen(slot uint32) int { return int(v.m.docLens[slot]) }

// Vocabulary returns every BM25 term, sorted. Do not modify it.
func (v *View) Vocabulary() []string { return v.m.vocab }

// ReversedVocabulary returns every BM25 term spelt backwards, sorted. Do
// not modify it.
func (v *View) ReversedVocabulary() []string { return v.m.rvocab }

// NameID returns the ID of slot's name key (see NameKey, NameOfID): equal
// names, equal IDs, so comparing them costs no string hashing.
func (v *View) NameID(slot uint32) uint32 { return v.m.refs[slot].NameID }

// NameIDs bounds the IDs of distinct names: they are below it.
func (v *View) NameIDs() int { return len(v.m.nameList) }

// NamesWithTrigram returns the IDs of the distinct lower-case names having
// the character trigram g. Do not modify it.
func (v *View) NamesWithTrigram(g string) []uint32 { return v.m.trigrams[g] }

// NameOfID returns the name key (see NameKey) with ID id.
func (v *View) NameOfID(id uint32) string { return v.m.nameList[id] }

// HasVectors reports whether any entity has a vector, and their length.
func (v *View) HasVectors() (bool, int) {
	if v.m.vectors == 0 {
		return false, 0
	}
	var dims int
	v.m.live.Each(func(s uint32) bool {
		if d := v.m.slots[s].dims; d > 0 {
			dims = d
			return false
		}
		return true
	})
	return true, dims
}

// DocumentInfo is a stored document with its entity counts.
type DocumentInfo struct {
	Document *lkv1.Document
	Entities int
	// Kind slug -> entities.
	Kinds map[string]int
}

// Documents returns every document that has entities, with counts, by
// key and then source. A key used by two sources (v1 and v2 "tob") gives
// two entries. The counts are kept on write: this costs the documents, not
// the entities.
func (v *View) Documents() []DocumentInfo {
	out := make([]DocumentInfo, 0, len(v.m.docs))
	for _, dc := range v.m.docs {
		d := DocumentInfo{Document: dc.document, Entities: dc.entities, Kinds: make(map[string]int, len(dc.kinds))}
		for k, n := range dc.kinds {
			d.Kinds[k.Slug()] = n
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DocumentInfo) int {
		if c := strings.Compare(strings.ToLower(a.Document.GetKey()), strings.ToLower(b.Document.GetKey())); c != 0 {
			return c
		}
		return int(a.Document.GetSource()) - int(b.Document.GetSource())
	})
	return out
}

// DocumentKeysNamed returns the lower-case keys of the documents whose name
// or display name is name, case-insensitively.
func (v *View) DocumentKeysNamed(name string) []string {
	return v.m.docsByName[strings.ToLower(strings.TrimSpace(name))]
}

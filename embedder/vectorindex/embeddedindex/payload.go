package embeddedindex

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"lorekeeper.dev/embedder/vectorindex/driver"
)

// A point's payload is kept as a record: one slice of numbers, no maps and
// no strings of its own. Payload values repeat across the catalogue (a
// kind, a document, a school, a damage type), so each (field, value) pair
// is interned once as a term, and a record lists its point's terms. Three
// maps per point held about 55 MB at 49,790 entities (the live heap fell
// from 396 to 345 MiB without them), and the collector walked every one
// of them each cycle; records hold about 5 MB and have no pointers to walk.
//
//	record: [n, term_1 … term_n (ascending), (field, low bits, high bits) per number]
//
// Keyword values and bools are terms (a bool's value is "true" or
// "false"); a number is its field's id and its float64 bits. Terms are
// never forgotten: a value no point holds any more keeps its id, and the
// dictionary grows only with distinct values, which a catalogue repeats.
type record []uint32

// dictionary interns payload fields and values. It is read and written
// under the index's lock.
type dictionary struct {
	terms  map[string]map[string]uint32 // keyword or bool field → value → term
	fields map[string]uint32            // number field → id
	next   uint32
}

func newDictionary() dictionary {
	return dictionary{terms: map[string]map[string]uint32{}, fields: map[string]uint32{}}
}

// term returns the id of field=value, interning it if new.
func (d *dictionary) term(field, value string) uint32 {
	vals, ok := d.terms[field]
	if !ok {
		vals = map[string]uint32{}
		d.terms[strings.Clone(field)] = vals
	}
	id, ok := vals[value]
	if !ok {
		id = d.id()
		vals[strings.Clone(value)] = id
	}
	return id
}

// field returns the id of a number field, interning it if new.
func (d *dictionary) field(name string) uint32 {
	id, ok := d.fields[name]
	if !ok {
		id = d.id()
		d.fields[strings.Clone(name)] = id
	}
	return id
}

func (d *dictionary) id() uint32 {
	id := d.next
	d.next++
	return id
}

// encode returns p as a record, interning what is new.
func (d *dictionary) encode(p driver.Payload) record {
	n := len(p.Bools)
	for _, vs := range p.Keywords {
		n += len(vs)
	}
	if n+len(p.Numbers) == 0 {
		return nil
	}
	terms := make([]uint32, 0, n)
	for f, vs := range p.Keywords {
		for _, v := range vs {
			terms = append(terms, d.term(f, v))
		}
	}
	for f, b := range p.Bools {
		terms = append(terms, d.term(f, strconv.FormatBool(b)))
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	rec := make(record, 0, 1+len(terms)+3*len(p.Numbers))
	rec = append(rec, uint32(len(terms)))
	rec = append(rec, terms...)
	for f, v := range p.Numbers {
		bits := math.Float64bits(v)
		rec = append(rec, d.field(f), uint32(bits), uint32(bits>>32))
	}
	return rec
}

// terms returns r's terms, ascending.
func (r record) terms() []uint32 {
	if len(r) == 0 {
		return nil
	}
	return r[1 : 1+r[0]]
}

// number returns the value r holds for the number field id.
func (r record) number(id uint32) (float64, bool) {
	if len(r) == 0 {
		return 0, false
	}
	for k := 1 + int(r[0]); k+2 < len(r); k += 3 {
		if r[k] == id {
			return math.Float64frombits(uint64(r[k+1]) | uint64(r[k+2])<<32), true
		}
	}
	return 0, false
}

// cond is a Filter's payload conditions against the dictionary: each
// keyword or bool condition the terms any of which satisfies it, each
// range its field's id. never is set when a condition names a field or
// value no point has ever held: nothing matches.
type cond struct {
	anyOf  [][]uint32
	ranges []rangeCond
	never  bool
}

type rangeCond struct {
	field    uint32
	min, max float64
}

// compile returns f's payload conditions; nil when there are none. The
// caller holds the index's lock (it reads the dictionary).
func (d *dictionary) compile(f *driver.Filter) *cond {
	if f == nil || len(f.Keywords)+len(f.Ranges)+len(f.Bools) == 0 {
		return nil
	}
	c := &cond{}
	// want adds the condition "one of these values of field"; a value
	// never interned cannot be held, and a condition with none left
	// cannot hold.
	want := func(field string, values ...string) {
		var ids []uint32
		for _, v := range values {
			if id, ok := d.terms[field][v]; ok {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			c.never = true
		}
		c.anyOf = append(c.anyOf, ids)
	}
	for k, v := range f.Keywords {
		want(k, v...)
	}
	for k, v := range f.Bools {
		want(k, strconv.FormatBool(v))
	}
	for k, r := range f.Ranges {
		id, ok := d.fields[k]
		if !ok {
			c.never = true
			continue
		}
		rc := rangeCond{id, math.Inf(-1), math.Inf(1)}
		if r.Min != nil {
			rc.min = *r.Min
		}
		if r.Max != nil {
			rc.max = *r.Max
		}
		c.ranges = append(c.ranges, rc)
	}
	return c
}

// matches reports whether r satisfies every condition; a missing field
// fails its condition. A nil cond matches everything.
func (c *cond) matches(r record) bool {
	if c == nil {
		return true
	}
	if c.never {
		return false
	}
	terms := r.terms()
	for _, ids := range c.anyOf {
		if !slices.ContainsFunc(terms, func(t uint32) bool { return slices.Contains(ids, t) }) {
			return false
		}
	}
	for _, rc := range c.ranges {
		v, ok := r.number(rc.field)
		if !ok || v < rc.min || v > rc.max {
			return false
		}
	}
	return true
}

package badgerstore

import (
	"encoding/binary"
	"math/bits"
)

// Set is a set of entity slots (the store's internal ordinals), as a
// bitmap. The zero Set is empty. Sets returned by a View are copies the
// caller may change.
type Set struct{ w []uint64 }

func newSet(n int) Set { return Set{w: make([]uint64, (n+63)/64)} }

// SetOf returns the set of slots.
func SetOf(slots ...uint32) Set {
	var s Set
	for _, x := range slots {
		s.add(x)
	}
	return s
}

// Reset empties s, keeping its memory for the slots added next: a
// ranking's scratch set, reused call after call.
func (s *Set) Reset() { clear(s.w) }

// Add puts slot i in s.
func (s *Set) Add(i uint32) { s.add(i) }

// Remove takes i out of the set.
func (s *Set) Remove(i uint32) { s.remove(i) }

func (s *Set) add(i uint32) {
	s.grow(i)
	s.w[i/64] |= 1 << (i % 64)
}

// grow makes room in s for slot i.
func (s *Set) grow(i uint32) {
	if wi := int(i / 64); wi >= len(s.w) {
		s.w = append(s.w, make([]uint64, wi+1-len(s.w))...)
	}
}

func (s *Set) remove(i uint32) {
	if wi := int(i / 64); wi < len(s.w) {
		s.w[wi] &^= 1 << (i % 64)
	}
}

// Has reports whether slot i is in s.
func (s Set) Has(i uint32) bool {
	wi := int(i / 64)
	return wi < len(s.w) && s.w[wi]&(1<<(i%64)) != 0
}

// Clone returns a copy of s.
func (s Set) Clone() Set { return Set{w: append([]uint64(nil), s.w...)} }

// And keeps only the slots also in o.
func (s *Set) And(o Set) {
	for i := range s.w {
		if i < len(o.w) {
			s.w[i] &= o.w[i]
		} else {
			s.w[i] = 0
		}
	}
}

// Or adds the slots of o.
func (s *Set) Or(o Set) {
	if len(o.w) > len(s.w) {
		s.w = append(s.w, make([]uint64, len(o.w)-len(s.w))...)
	}
	for i, w := range o.w {
		s.w[i] |= w
	}
}

// Fingerprint returns a string equal for equal sets and different
// otherwise, to remember values derived from a set by (View.Memo).
func (s Set) Fingerprint() string {
	n := len(s.w)
	for n > 0 && s.w[n-1] == 0 {
		n--
	}
	b := make([]byte, 0, 8*n)
	for _, w := range s.w[:n] {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return string(b)
}

// Len is the number of slots in s.
func (s Set) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Empty reports whether s has no slots.
func (s Set) Empty() bool {
	for _, w := range s.w {
		if w != 0 {
			return false
		}
	}
	return true
}

// Each calls fn for every slot in ascending order until fn returns false.
func (s Set) Each(fn func(slot uint32) bool) {
	for wi, w := range s.w {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			if !fn(uint32(wi*64 + b)) {
				return
			}
			w &= w - 1
		}
	}
}

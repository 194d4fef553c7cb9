package badgerstore

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// maxFew is how many slots a posting keeps as a sorted list before it
// becomes a compressed bitmap: a list of a few slots costs a few words,
// and the values unique to an entity (its name, slug, key and source key:
// four postings an entity) never need more.
const maxFew = 32

// posting is the set of slots holding one (field, value), stored so that
// its size follows its members, not the highest slot: a sorted list while
// small, a Roaring bitmap past maxFew. A dense bitmap per posting cost
// N/8 bytes each, N²/2 in all for the unique values alone (537 MiB at
// 46,000 entities).
type posting struct {
	key  string // field "\x00" value
	few  []uint32
	many *roaring.Bitmap // nil while few
}

func (p *posting) add(slot uint32) {
	if p.many != nil {
		p.many.Add(slot)
		return
	}
	i, found := slices.BinarySearch(p.few, slot)
	if found {
		return
	}
	if len(p.few) < maxFew {
		p.few = slices.Insert(p.few, i, slot)
		return
	}
	p.many = roaring.BitmapOf(p.few...)
	p.many.Add(slot)
	p.few = nil
}

func (p *posting) remove(slot uint32) {
	if p.many != nil {
		p.many.Remove(slot)
		return
	}
	if i, found := slices.BinarySearch(p.few, slot); found {
		p.few = slices.Delete(p.few, i, i+1)
	}
}

func (p *posting) empty() bool {
	if p.many != nil {
		return p.many.IsEmpty()
	}
	return len(p.few) == 0
}

// orInto adds the posting's slots to s.
func (p *posting) orInto(s *Set) {
	if p.many == nil {
		if len(p.few) > 0 {
			s.grow(p.few[len(p.few)-1]) // the highest: one allocation
		}
		for _, x := range p.few {
			s.add(x)
		}
		return
	}
	// WriteDenseTo copies whole bitmap containers over the words it
	// writes, so it may only write into zeroes.
	n := int(p.many.DenseSize()) // words
	if s.Empty() {
		if len(s.w) < n {
			s.w = append(s.w, make([]uint64, n-len(s.w))...)
		}
		p.many.WriteDenseTo(s.w)
		return
	}
	s.Or(Set{w: p.many.ToDense()})
}

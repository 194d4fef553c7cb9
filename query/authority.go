package query

import (
	"lorekeeper.dev/embedder/badgerstore"
)

// Ranking one entity per name (dedupe, no documents asked for) ranks each
// name by its most authoritative copy among the candidates (documentRank:
// SRD 5.1, then SRD 5.2, ...), the copy the result then shows. Ranked by
// whichever copy scored best, a 5e question would be answered in the order
// another book's text deserves: since the reference entries are split per
// edition, Level Up's Stealth ("notice hidden creatures...") outranked SRD
// 5.1's Perception, shown as SRD 5.1's Stealth.

// shadows says which slots have a more authoritative copy (same kind and
// name, a document of lower documentRank), derived from the index alone
// and remembered until the next write.
type shadows struct {
	unshadowed badgerstore.Set // the slots with no more authoritative copy
	shadowed   badgerstore.Set // the others
	better     [][]uint32      // by slot: its more authoritative copies
}

func shadowing(v *badgerstore.View) *shadows {
	return v.Memo("query.shadowing", func() any {
		groups := map[kindName][]uint32{}
		sh := &shadows{better: make([][]uint32, v.Capacity())}
		v.InOrder(func(slot uint32) bool {
			k := kindName{v.Kind(slot), v.NameID(slot)}
			groups[k] = append(groups[k], slot)
			return true
		})
		for _, g := range groups {
			for _, s := range g {
				r := documentRank(v.Document(s).GetKey())
				for _, o := range g {
					if documentRank(v.Document(o).GetKey()) < r {
						sh.better[s] = append(sh.better[s], o)
					}
				}
				if sh.better[s] == nil {
					sh.unshadowed.Add(s)
				} else {
					sh.shadowed.Add(s)
				}
			}
		}
		return sh
	}).(*shadows)
}

// authoritative is cand without the copies a more authoritative copy among
// cand shadows: what dedupe ranks.
func authoritative(v *badgerstore.View, cand badgerstore.Set) badgerstore.Set {
	sh := shadowing(v)
	out := cand.Clone()
	out.And(sh.unshadowed)
	maybe := cand.Clone()
	maybe.And(sh.shadowed)
	maybe.Each(func(s uint32) bool {
		for _, b := range sh.better[s] {
			if cand.Has(b) {
				return true // ranked as its better copy
			}
		}
		out.Add(s)
		return true
	})
	return out
}

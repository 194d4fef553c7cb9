package query

import (
	"slices"

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
// cand shadows: what dedupe ranks. A copy that answers the question while
// no more authoritative one does is the one ranked instead, and shown: it
// matches everything the question's words say (SRD 5.2's Grappling Hook
// says it is climbed, SRD 5.1's only names it), or its text has every word
// of the question (says: a homebrew Fireball whose text says "lavender").
// Either makes it a hit whatever its score, as the copy it replaces was.
// said is says with the copies ranked in place of a copy that says every
// word: what search keeps as a hit whatever its score.
func authoritative(v *badgerstore.View, cand badgerstore.Set, u *understanding, says badgerstore.Set) (out, said badgerstore.Set) {
	sh := shadowing(v)
	out, said = cand.Clone(), says
	cloned := false
	out.And(sh.unshadowed)
	maybe := cand.Clone()
	maybe.And(sh.shadowed)
	maybe.Each(func(s uint32) bool {
		var rivals []uint32
		for _, b := range sh.better[s] {
			if cand.Has(b) {
				rivals = append(rivals, b)
			}
		}
		switch {
		case len(rivals) == 0 || answersBetter(u, says, s, rivals):
			out.Add(s)
			for _, b := range rivals {
				out.Remove(b)
			}
		case says.Has(s):
			if !cloned {
				said, cloned = says.Clone(), true // says is the view's, shared
			}
			for _, b := range rivals {
				said.Add(b)
			}
		}
		return true
	})
	return out, said
}

// answersBetter reports whether copy s answers the question while none of
// its more authoritative rivals does (authoritative). Saying the
// question's words counts only when the question is words looked for: a
// question read as facets ("put enemies to sleep") is answered by what the
// copies do, and any book's Sleep may say "put" and "enemies" where the
// SRD's says "slumber".
func answersBetter(u *understanding, says badgerstore.Set, s uint32, rivals []uint32) bool {
	if says.Has(s) && !slices.ContainsFunc(rivals, says.Has) && (u == nil || len(u.filters) == 0) {
		return true
	}
	if !u.answers() {
		return false
	}
	tier := u.tierOf(s)
	return tier >= u.complete && !slices.ContainsFunc(rivals, func(b uint32) bool { return u.tierOf(b) >= tier })
}

// With no book named, the SRDs' entries are what most tables mean: a
// third-party entity that only shares words with a question should not
// outrank the SRD entity that answers it. authorityPrior is the prior that
// says so: the entities of the SRDs and their core concepts (documentRank
// below 3) and the weight added to their scores. None when the request or
// the question names documents (homebrew named wins as its book's tier),
// or with Options.AuthorityPrior negative.
func (s *Service) authorityPrior(v *badgerstore.View, p *plan, u *understanding) (*badgerstore.Set, float64) {
	if s.opts.AuthorityPrior < 0 || p.docsSet || u != nil && len(u.docs) > 0 {
		return nil, 0
	}
	set := v.Memo("query.authority-prior", func() any {
		s := v.Postings(badgerstore.FieldDocument, "srd-2014", "srd-2024", "core")
		return &s
	}).(*badgerstore.Set)
	return set, s.opts.AuthorityPrior
}

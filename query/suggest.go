package query

import (
	"context"
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

const (
	matchAlias = "alias"

	// maxSuggestedNames bounds did-you-mean: the closest distinct names,
	// each with every copy among the candidates.
	maxSuggestedNames = 5
	// suggestSpread keeps suggestions within reach of the closest one.
	suggestSpread = 0.25
	// maxMeaningSuggestions bounds the open content offered by meaning for
	// a name that is not open content.
	maxMeaningSuggestions = 5

	viaName    = "name"
	viaAlias   = "alias"
	viaMeaning = "meaning"
)

// matchAliasName narrows cand to the entities an alias-table entry for
// name points at ("Melf's Acid Arrow" -> Acid Arrow), returning the known
// name that matched; an empty set when none.
func matchAliasName(v *badgerstore.View, cand badgerstore.Set, name string) (badgerstore.Set, string) {
	var out badgerstore.Set
	known := ""
	for _, a := range relevance.Aliases().Lookup(name) {
		if a.Type == relevance.AliasNotOpen {
			continue
		}
		s := ofKind(v, v.Postings(badgerstore.FieldName, a.Name), a.Kind)
		s.And(cand)
		if !s.Empty() {
			out.Or(s)
			if known == "" {
				known = a.Known
			}
		}
	}
	return out, known
}

// ofKind keeps the slots of s that hold kind k.
func ofKind(v *badgerstore.View, s badgerstore.Set, k lkv1.Kind) badgerstore.Set {
	var out badgerstore.Set
	s.Each(func(slot uint32) bool {
		if v.Kind(slot) == k {
			out.Add(slot)
		}
		return true
	})
	return out
}

// notOpen returns the alias-table entry saying name (or a near spelling of
// it) is a well-known name no open document carries.
func notOpen(name string) (relevance.Alias, bool) {
	if isPattern(name) {
		return relevance.Alias{}, false
	}
	for _, a := range relevance.Aliases().Lookup(name) {
		if a.Type == relevance.AliasNotOpen {
			return a, true
		}
	}
	var best relevance.Alias
	bestSim := 0.0
	for a, sim := range relevance.Aliases().Near(name, relevance.MinFuzzySim) {
		if a.Type == relevance.AliasNotOpen && sim > bestSim {
			best, bestSim = *a, sim
		}
	}
	return best, bestSim > 0
}

// notOpenSaid returns the alias-table entry of a well-known name no open
// document carries that a question mostly is ("describe a beholder", "how
// do mind flayers fight"): at least half its words but for stop words and
// asking words, the last maybe in the plural.
func notOpenSaid(q string) (relevance.Alias, bool) {
	words := questionWords(q)
	content := contentWords(words, nil)
	for n := min(3, len(words)); n >= 1 && 2*n >= content; n-- {
		for i := 0; i+n <= len(words); i++ {
			if stopword(words[i]) || stopword(words[i+n-1]) {
				continue
			}
			said := strings.Join(words[i:i+n], " ")
			for _, name := range []string{said, strings.TrimSuffix(said, "s")} {
				for _, a := range relevance.Aliases().Lookup(name) {
					if a.Type == relevance.AliasNotOpen {
						return a, true
					}
				}
			}
		}
	}
	return relevance.Alias{}, false
}

// memoNotOpen is notOpen(name), else notOpenSaid(name), remembered in v:
// search asks it of every query, and the alias table's near spellings take
// a scan of the table.
func memoNotOpen(v *badgerstore.View, name string) (relevance.Alias, bool) {
	type answer struct {
		alias relevance.Alias
		ok    bool
	}
	a := v.Memo("notopen\x00"+name, func() any {
		alias, ok := notOpen(name)
		if !ok {
			alias, ok = notOpenSaid(name)
		}
		return answer{alias, ok}
	}).(answer)
	return a.alias, a.ok
}

// suggest returns did-you-mean suggestions for name among cand: the names
// closest to it (typo-tolerant over the whole normalised name, through the
// trigram index) and the open names of near aliases, best first.
func suggest(v *badgerstore.View, cand badgerstore.Set, name string) []*lkv1.NameSuggestion {
	q := relevance.NormalizeName(name)
	if q == "" || len(q) > 2*MaxNameLength {
		return nil
	}
	type hit struct {
		name string // lower-case, as indexed
		sim  float64
		via  string
		kind lkv1.Kind // for aliases; 0: any
	}
	hits := map[string]hit{}
	for _, n := range trigramNames(v, q) {
		if sim := relevance.NameSimilarity(q, relevance.NormalizeName(n)); sim >= relevance.MinSuggestSim {
			hits[n] = hit{name: n, sim: sim, via: viaName}
		}
	}
	for a, sim := range relevance.Aliases().Near(q, relevance.MinSuggestSim) {
		if a.Type == relevance.AliasNotOpen {
			continue
		}
		n := strings.ToLower(a.Name)
		if h, ok := hits[n]; !ok || sim > h.sim {
			hits[n] = hit{name: n, sim: sim, via: viaAlias, kind: a.Kind}
		}
	}
	ordered := make([]hit, 0, len(hits))
	for _, h := range hits {
		ordered = append(ordered, h)
	}
	slices.SortFunc(ordered, func(a, b hit) int {
		if a.sim != b.sim {
			if a.sim > b.sim {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var out []*lkv1.NameSuggestion
	names := 0
	for _, h := range ordered {
		if names == maxSuggestedNames || len(out) > 0 && h.sim < out[0].GetScore()-suggestSpread {
			break
		}
		set := v.Postings(badgerstore.FieldName, h.name)
		if h.kind != lkv1.Kind_KIND_UNSPECIFIED {
			set = ofKind(v, set, h.kind)
		}
		set.And(cand)
		if set.Empty() {
			continue
		}
		names++
		v.InNameOrder(set, func(slot uint32) bool {
			out = append(out, suggestion(v, slot, h.sim, h.via))
			return true
		})
	}
	return out
}

// suggestByMeaning adds to resp the candidates of p closest in meaning to
// description (what a name that is not open content is).
func (s *Service) suggestByMeaning(ctx context.Context, p *plan, description string, resp *lkv1.LookupResponse) error {
	if s.emb == nil {
		return nil
	}
	qvec, reason := s.embedQuery(ctx, description)
	if err := ctx.Err(); err != nil {
		return err
	}
	if reason != "" {
		return nil // the name suggestions stand alone
	}
	hits, err := s.searchVectors(ctx, qvec, new(scratch), p.candidates)
	if err != nil {
		return err
	}
	return s.store.View(ctx, func(v *badgerstore.View) error {
		resp.Suggestions = append(resp.Suggestions, meaningSuggestions(v, p.candidates(v), hits)...)
		return nil
	})
}

// meaningSuggestions are the candidates closest in meaning by hits.
func meaningSuggestions(v *badgerstore.View, cand badgerstore.Set, hits *vectorHits) []*lkv1.NameSuggestion {
	if hits == nil || cand.Empty() {
		return nil
	}
	cos := hits.cosine(v, new(scratch))
	if cos == nil {
		return nil
	}
	var slots []uint32
	cos.with.Each(func(slot uint32) bool {
		if cand.Has(slot) {
			slots = append(slots, slot)
		}
		return true
	})
	slices.SortFunc(slots, func(a, b uint32) int {
		if cos.scores[a] != cos.scores[b] {
			if cos.scores[a] > cos.scores[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	var out []*lkv1.NameSuggestion
	seen := map[string]bool{}
	for _, slot := range slots {
		if len(out) == maxMeaningSuggestions {
			break
		}
		if n := v.NameKey(slot); !seen[n] {
			seen[n] = true
			out = append(out, suggestion(v, slot, min(max(cos.scores[slot], 0), 1), viaMeaning))
		}
	}
	return out
}

func suggestion(v *badgerstore.View, slot uint32, score float64, via string) *lkv1.NameSuggestion {
	d := v.Document(slot)
	key := v.Key(slot)
	return &lkv1.NameSuggestion{
		Name:         v.DisplayName(slot),
		Key:          key,
		Uri:          lkv1.EntityURI(key),
		DocumentKey:  d.GetKey(),
		DocumentName: d.GetName(),
		Score:        score,
		Via:          via,
	}
}

package query

import (
	"container/heap"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// MaxCompletions is the most values CompleteValues returns, as MCP allows.
const MaxCompletions = 100

// CompleteValues answers what a user is typing: entity names or keys,
// document keys, creature types or environments starting with the prefix
// (or with a word starting with it), best first. It reads only the
// in-memory index: one pass over the names for names and keys, the distinct
// values for the rest.
func (s *Service) CompleteValues(ctx context.Context, req *lkv1.CompleteValuesRequest) (*lkv1.CompleteValuesResponse, error) {
	if err := checkText("prefix", req.GetPrefix(), MaxNameLength); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > MaxCompletions {
		limit = MaxCompletions
	}
	kinds := map[lkv1.Kind]bool{}
	for _, k := range req.GetKinds() {
		if k.Slug() == "" {
			return nil, invalid("kinds", "unknown kind %d", k)
		}
		kinds[k] = true
	}
	if len(req.GetDocuments()) > MaxDocuments {
		return nil, invalid("documents", "%d documents, at most %d allowed", len(req.GetDocuments()), MaxDocuments)
	}
	if err := checkValues("documents", req.GetDocuments()); err != nil {
		return nil, err
	}
	m := newMatcher(req.GetPrefix(), limit)
	err := s.store.View(ctx, func(v *badgerstore.View) error {
		switch f := req.GetField(); f {
		case lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY:
			byKey := f == lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY && strings.Contains(m.prefix, ":")
			names := f == lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME
			var inDocs badgerstore.Set
			if len(req.GetDocuments()) > 0 {
				inDocs = documentSet(v, req.GetDocuments())
			}
			last, pos := "", 0
			v.InOrder(func(slot uint32) bool {
				pos++
				if len(kinds) > 0 && !kinds[v.Kind(slot)] {
					return true
				}
				if len(req.GetDocuments()) > 0 && !inDocs.Has(slot) {
					return true
				}
				if byKey {
					if key := v.Key(slot); strings.HasPrefix(strings.ToLower(key), m.prefix) {
						m.offer(key, 0, 0, pos)
					}
					return true
				}
				name := v.Name(slot)
				if names && name == last {
					return true // one value per name: the first copy in name order (the SRD's)
				}
				if tier, ok := m.tier(name, " -(/"); ok {
					last = name
					if names {
						m.offer(v.DisplayName(slot), tier, len(name), pos)
					} else {
						m.offer(v.Key(slot), tier, len(name), pos)
					}
				}
				return true
			})
			if names {
				m.parts(v, kinds, inDocs, len(req.GetDocuments()) > 0)
			}
		case lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT:
			m.values(v, badgerstore.FieldDocument, "-")
		case lkv1.CompletionField_COMPLETION_FIELD_CREATURE_TYPE:
			m.values(v, badgerstore.FieldCreatureType, " -")
		case lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT:
			m.values(v, badgerstore.FieldEnvironment, " -")
		default:
			return invalid("field", "unknown completion field %d", f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m.result(), nil
}

// matcher keeps the best limit matches of a prefix, counting them all.
type matcher struct {
	prefix string
	limit  int
	total  int
	best   completions // a max-heap: the worst kept match on top
}

type completion struct {
	value string
	tier  int // 0: the value starts with the prefix; 1: one of its words does
	size  int // shorter first
	pos   int // then this order (name order, or alphabetical)
}

func (a completion) less(b completion) bool {
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.size != b.size {
		return a.size < b.size
	}
	if a.pos != b.pos {
		return a.pos < b.pos
	}
	return a.value < b.value
}

type completions []completion

func (h completions) Len() int           { return len(h) }
func (h completions) Less(i, j int) bool { return h[j].less(h[i]) }
func (h completions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *completions) Push(x any)        { *h = append(*h, x.(completion)) }
func (h *completions) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMatcher(prefix string, limit int) *matcher {
	return &matcher{prefix: strings.ToLower(strings.TrimSpace(prefix)), limit: limit}
}

// tier reports whether the lower-case s matches: 0 when it starts with the
// prefix, 1 when a word of it (after one of seps) does.
func (m *matcher) tier(s, seps string) (int, bool) {
	if strings.HasPrefix(s, m.prefix) {
		return 0, true
	}
	for i := strings.Index(s, m.prefix); i > 0; {
		if strings.IndexByte(seps, s[i-1]) >= 0 {
			return 1, true
		}
		j := strings.Index(s[i+1:], m.prefix)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return 0, false
}

func (m *matcher) offer(value string, tier, size, pos int) {
	m.total++
	c := completion{value: value, tier: tier, size: size, pos: pos}
	if len(m.best) < m.limit {
		heap.Push(&m.best, c)
		return
	}
	if c.less(m.best[0]) {
		m.best[0] = c
		heap.Fix(&m.best, 0)
	}
}

// parts offers the names of parts and features no entity bears itself
// ("surprise", "death saving throws": a name lookup finds what holds them),
// held by an entity of the kinds asked (all when none) in the documents
// asked (inDocs, when byDocs), after the names.
func (m *matcher) parts(v *badgerstore.View, kinds map[lkv1.Kind]bool, inDocs badgerstore.Set, byDocs bool) {
	v.Values(badgerstore.FieldFeature, func(val string, _ int) {
		tier, ok := m.tier(val, " -(/")
		if !ok || nameExists(v, val) {
			return
		}
		held := false
		v.Postings(badgerstore.FieldFeature, val).Each(func(slot uint32) bool {
			held = (len(kinds) == 0 || kinds[v.Kind(slot)]) && (!byDocs || inDocs.Has(slot))
			return !held
		})
		if held {
			m.offer(titled(val), tier+2, len(val), 0)
		}
	})
}

// titled is a lower-case part name as a heading prints it: "Death Saving
// Throws", "Dropping to 0 Hit Points".
func titled(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if i > 0 && smallWords[w] {
			continue
		}
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

var smallWords = map[string]bool{"a": true, "an": true, "and": true, "at": true, "by": true, "for": true,
	"in": true, "of": true, "on": true, "or": true, "the": true, "to": true, "with": true}

// values offers the distinct values of an enumerated field.
func (m *matcher) values(v *badgerstore.View, field, seps string) {
	v.Values(field, func(val string, _ int) {
		if tier, ok := m.tier(val, seps); ok {
			m.offer(val, tier, len(val), 0)
		}
	})
}

func (m *matcher) result() *lkv1.CompleteValuesResponse {
	best := slices.Clone(m.best)
	slices.SortFunc(best, func(a, b completion) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	resp := &lkv1.CompleteValuesResponse{Values: make([]string, len(best)), Total: uint32(m.total), HasMore: m.total > len(best)}
	for i, c := range best {
		resp.Values[i] = c.value
	}
	return resp
}

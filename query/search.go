package query

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Search answers search_dnd_content: every kind (or those asked for),
// ranked by the hybrid score with typo-tolerant names, grouped by kind with
// limit results per kind, groups ordered by their best result.
func (s *Service) Search(ctx context.Context, req *lkv1.SearchRequest) (*lkv1.SearchResponse, error) {
	q, warn, err := semanticQuery("query", req.GetQuery())
	if err != nil {
		return nil, err
	}
	if q == "" {
		return nil, invalid("query", "required")
	}
	// The scope is a lookup's: the same checks, through commonPlan.
	p, err := s.commonPlan(&lkv1.Common{Limit: req.GetLimit(), Documents: req.GetDocuments(),
		GameSystems: req.GetGameSystems(), Sources: req.GetSources()})
	if err != nil {
		return nil, err
	}
	if warn != "" {
		p.warnings = append(p.warnings, warn)
	}
	for _, k := range req.GetKinds() {
		if k.Slug() == "" {
			return nil, invalid("kinds", "unknown kind %d", k)
		}
	}
	p.kinds = lkv1.Kinds()
	if len(req.GetKinds()) > 0 {
		kf, kinds, err := kindFilter("kinds", req.GetKinds(), lkv1.Kinds())
		if err != nil {
			return nil, err
		}
		p.add(kf)
		p.kinds = kinds
	}
	resp := &lkv1.SearchResponse{Ranking: lkv1.Ranking_RANKING_HYBRID, Warnings: p.warnings}
	hash := requestHash(req, func(m proto.Message) {
		r := m.(*lkv1.SearchRequest)
		r.Cursor, r.Limit = "", 0
	})
	cur, err := decodeCursor(req.GetCursor(), hash)
	if err != nil {
		return nil, err
	}
	if p.docsSet && len(p.docs) == 0 {
		return resp, nil
	}
	if cur != nil {
		return s.searchPage(ctx, req, p, cur, resp)
	}
	var qvec []float32
	if req.Semantic == nil || req.GetSemantic() {
		var reason string
		qvec, reason = s.embedQuery(ctx, q)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if reason != "" {
			resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
			resp.FallbackReason = reason
		}
	} else {
		resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
	}
	sc := s.getScratch()
	defer s.putScratch(sc)
	var vh *vectorHits
	if qvec != nil {
		if vh, err = s.searchVectors(ctx, qvec, sc, p.candidates); err != nil {
			return nil, err
		}
	}
	err = s.store.View(ctx, func(v *badgerstore.View) error {
		cand := p.candidates(v)
		if p.docsSet {
			if w := documentsWarning(v, p.docs); w != "" {
				resp.Warnings = append(resp.Warnings, w)
			}
		}
		if p.docsSet && cand.Empty() {
			return nil
		}
		var cos *cosine
		if vh != nil {
			if cos = vh.cosine(v, sc); cos == nil {
				resp.Ranking, resp.FallbackReason = lkv1.Ranking_RANKING_KEYWORD, vh.reason
			}
		}
		u := s.understand(v, q, p.kinds)
		// An entity whose text has every word of a short question is a
		// hit however weak: a word in a text finds it ("petrified").
		says := sayingAll(v, q)
		ranks := cand
		if !p.docsSet {
			ranks, says = authoritative(v, cand, u, says) // see authority.go
		}
		// Only hits are shown, so only hits are ranked, unless a
		// superlative orders the top tier, hits or not.
		hitsOnly := u == nil || u.order == nil
		// The "mean" of "what does X mean" is no term ("X/Day means"
		// would rank first); the "work" of "how does X work" is: search
		// reads it as a rules question already, and without it the best
		// BM25 among the candidates changes: "how does fire damage work"
		// ranked the Fire damage type above the Damage Types rule.
		how := rankHow{fuzzy: true, hitsOnly: hitsOnly, cosineWeight: s.opts.CosineWeight, u: u, said: says}
		how.prior, how.priorWeight = s.authorityPrior(v, p, u)
		scoredAll := rank(v, ranks, q, unframed(q, true), cos, how, sc)
		u.orderItems(v, scoredAll, how)
		resp.Understood = u.proto()
		// Results must match (a term, the name, or by meaning) and score
		// within reach of the best one: kinds with only weak matches stay
		// out instead of padding the answer. What matches every filter
		// the question's words say stays in whatever its score.
		// The best is what the question's words score as they are: a name
		// the understanding reads in what is left of them ("paralyzes" of
		// "a poison that paralyzes" near Paralyzed) raises its holder, not
		// the bar the others must reach.
		best := 0.0
		for _, sc := range scoredAll {
			if sc.hit && !sc.named {
				best = max(best, sc.shown())
			}
		}
		hits := scoredAll[:0]
		exact := false
		for _, sc := range scoredAll {
			if sc.hit && (sc.shown() >= relevance.RelativeFloor*best || sc.exact || u.matchesAll(sc) || says.Has(sc.slot)) {
				hits = append(hits, sc)
				exact = exact || sc.exact
			}
		}
		if a, ok := memoNotOpen(v, q); ok && !exact {
			resp.NotOpenContent = a.Known
		} else if !exact && noSuchName(v, cand, q) {
			// Said before the nearest, which would pass for its match.
			resp.Warnings = append([]string{fmt.Sprintf("No entity is named %q; the nearest names and meanings follow.", q)}, resp.Warnings...)
		}
		// One ranking per kind; groups ordered by their best result. The
		// kinds' lists are runs of one scratch array, not a slice each
		// grown hit by hit.
		// Kinds are small numbers: arrays indexed by them, not maps, for a
		// step taken per hit (thousands a question).
		counts := make([]int, len(lkv1.Kind_name))
		for _, x := range hits {
			counts[x.ref.Kind]++
		}
		type kindBest struct {
			kind lkv1.Kind
			best scored
			r    *ranking
		}
		var groups []kindBest
		if cap(sc.kinds) < len(hits) {
			sc.kinds = sc.array(len(hits))
		}
		byKind := make([][]scored, len(counts))
		at := 0
		for k, n := range counts {
			byKind[k] = sc.kinds[at : at : at+n]
			at += n
		}
		for _, x := range hits {
			byKind[x.ref.Kind] = append(byKind[x.ref.Kind], x)
		}
		for k, items := range byKind {
			if len(items) == 0 {
				continue
			}
			r := newRanking(items)
			groups = append(groups, kindBest{kind: lkv1.Kind(k), best: r.best(), r: r})
		}
		slices.SortFunc(groups, func(a, b kindBest) int {
			if better(a.best, b.best) {
				return -1
			}
			if better(b.best, a.best) {
				return 1
			}
			return 0
		})
		dedupe := !p.docsSet
		pages := make([][]scored, len(groups))
		taken := make([]map[kindName]bool, len(groups))
		more := false
		for i, g := range groups {
			taken[i] = map[kindName]bool{}
			pages[i] = first(g.r, dedupe, taken[i], p.limit+1)
			more = more || len(pages[i]) > p.limit
		}
		var snap *snapshot
		if more {
			// Keep every group's candidates not ranked yet, so that later
			// pages rank them on demand into the same lists whatever is
			// ingested meanwhile.
			snap = &snapshot{ranking: resp.Ranking, fallback: resp.FallbackReason}
		}
		for i, g := range groups {
			items := pages[i]
			total := len(items)
			if snap != nil {
				total = distinct(v.NameIDs(), dedupe, items, g.r.h)
				snap.groups = append(snap.groups, newGroup(g.kind, items, g.r, dedupe, taken[i], total))
				items = items[:min(p.limit, len(items))]
			}
			results, err := materialize(v, items, cand, dedupe, qvec != nil)
			if err != nil {
				return err
			}
			resp.Groups = append(resp.Groups, &lkv1.ResultGroup{Kind: g.kind, Results: results, Total: uint64(total)})
			resp.Total += uint64(total)
		}
		if snap != nil {
			// The snapshot takes the array the candidates live in.
			snap.arrays = [][]scored{sc.kinds}
			sc.kinds = nil
			id := s.snaps.put(snap)
			resp.NextCursor = (&cursor{Query: hash, Snapshot: id, Offset: p.limit}).encode()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// searchPage answers a later page of a search from its snapshot: each
// kind's next limit results.
func (s *Service) searchPage(ctx context.Context, req *lkv1.SearchRequest, p *plan, cur *cursor, resp *lkv1.SearchResponse) (*lkv1.SearchResponse, error) {
	if cur.Snapshot == "" {
		return nil, invalid("cursor", "was made for a different request; repeat the same arguments (only limit may change) or start again without a cursor")
	}
	snap, err := s.snaps.resume(ctx, cur, func(ctx context.Context) (string, lkv1.Ranking, string, error) {
		again := proto.Clone(req).(*lkv1.SearchRequest)
		again.Cursor, again.Limit = "", 1
		resp, err := s.Search(ctx, again)
		return resp.GetNextCursor(), resp.GetRanking(), resp.GetFallbackReason(), err
	})
	if err != nil {
		return nil, err
	}
	defer s.snaps.release(snap)
	resp.Ranking, resp.FallbackReason = snap.ranking, snap.fallback
	err = s.store.View(ctx, func(v *badgerstore.View) error {
		cand := p.candidates(v)
		u := s.understand(v, req.GetQuery(), p.kinds)
		resp.Understood = u.proto()
		more := false
		for i := range snap.groups {
			g := snap.groups[i]
			// Every group counts, those with nothing left on this page too.
			resp.Total += uint64(g.total)
			items, m := g.page(v, cur.Offset, p.limit, cand)
			more = more || m
			if len(items) == 0 {
				continue
			}
			results, err := materialize(v, items, cand, !p.docsSet, snap.ranking == lkv1.Ranking_RANKING_HYBRID)
			if err != nil {
				return err
			}
			resp.Groups = append(resp.Groups, &lkv1.ResultGroup{Kind: g.kind, Results: results, Total: uint64(g.total)})
		}
		if more {
			resp.NextCursor = (&cursor{Query: cur.Query, Snapshot: cur.Snapshot, Offset: cur.Offset + p.limit}).encode()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// maxSaidWords bounds the words of a question whose texts sayingAll finds:
// a longer one is a description, not words looked for.
const maxSaidWords = 3

// sayingAll are the entities whose text (BM25's terms, the prose the
// model does not read included) has every word of q, when q has at most
// maxSaidWords words besides stop words, remembered by the view.
func sayingAll(v *badgerstore.View, q string) badgerstore.Set {
	terms := relevance.Tokenize(q)
	if len(terms) == 0 || len(terms) > maxSaidWords {
		return badgerstore.Set{}
	}
	return v.Memo("saying\x00"+strings.Join(terms, " "), func() any {
		var all badgerstore.Set
		for i, t := range terms {
			var has badgerstore.Set
			for _, term := range []string{t, relevance.UnreadPrefix + t} {
				for _, p := range v.TermPostings(term) {
					has.Add(p.Slot)
				}
			}
			if i == 0 {
				all = has
			} else {
				all.And(has)
			}
		}
		return all
	}).(badgerstore.Set)
}

// noSuchName reports whether q reads as a name ("land shark") that names
// nothing: no entity, alias or inflection of it, while names near it in
// spelling would rank first as if they were its match (Reef Shark).
func noSuchName(v *badgerstore.View, cand badgerstore.Set, q string) bool {
	lower := strings.ToLower(strings.TrimSpace(q))
	if len(fuzzyNames(v, lower)) == 0 {
		return false
	}
	if alias, _ := matchAliasName(v, cand, q); !alias.Empty() {
		return false
	}
	return matchInflection(v, cand, lower).Empty()
}

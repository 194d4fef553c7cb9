package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// plan is a validated lookup: what to match, filter and rank.
type plan struct {
	name        string
	limit       int
	docsSet     bool
	docs        []string
	semantic    string
	gameSystems []string
	sources     []string
	filters     []filter
	warnings    []string
	// kinds are the kinds the request covers: what semantic's words are
	// read against (understand).
	kinds []lkv1.Kind
}

func (s *Service) commonPlan(c *lkv1.Common) (*plan, error) {
	p := &plan{}
	if err := checkText("name", c.GetName(), MaxNameLength); err != nil {
		return nil, err
	}
	// Compatibility forms are the same name: fullwidth letters
	// ("Ｆｉｒｅｂａｌｌ"), ligatures ("ﬁreball").
	p.name = strings.TrimSpace(norm.NFKC.String(c.GetName()))
	var err error
	if p.limit, err = s.limit("limit", c.GetLimit()); err != nil {
		return nil, err
	}
	if c.GetDocuments() != nil {
		p.docsSet = true
		p.docs = c.GetDocuments().GetDocuments()
		if len(p.docs) > MaxDocuments {
			return nil, invalid("documents", "%d documents, at most %d allowed", len(p.docs), MaxDocuments)
		}
		if err := checkValues("documents", p.docs); err != nil {
			return nil, err
		}
	}
	q, warn, err := semanticQuery("semantic_query", c.GetSemanticQuery())
	if err != nil {
		return nil, err
	}
	p.semantic = q
	if warn != "" {
		p.warnings = append(p.warnings, warn)
		s.log.Warn("semantic query truncated", "length", len([]rune(c.GetSemanticQuery())))
	}
	if err := checkValues("game_systems", c.GetGameSystems()); err != nil {
		return nil, err
	}
	for _, g := range c.GetGameSystems() {
		p.gameSystems = append(p.gameSystems, strings.ToLower(strings.TrimSpace(g)))
	}
	for _, src := range c.GetSources() {
		if src.Slug() == "" {
			return nil, invalid("sources", "unknown source %d", src)
		}
		p.sources = append(p.sources, src.Slug())
	}
	return p, nil
}

func (p *plan) add(fs ...filter) {
	for _, f := range fs {
		if f != nil {
			p.filters = append(p.filters, f)
		}
	}
}

// candidates is every entity passing the plan's structured filters.
func (p *plan) candidates(v *badgerstore.View) badgerstore.Set {
	set := v.All()
	if p.docsSet {
		set.And(documentSet(v, p.docs))
	}
	if len(p.gameSystems) > 0 {
		set.And(v.Postings(badgerstore.FieldGameSystem, p.gameSystems...))
	}
	if len(p.sources) > 0 {
		set.And(v.Postings(badgerstore.FieldSource, p.sources...))
	}
	for _, f := range p.filters {
		if set.Empty() {
			break
		}
		f(v, &set)
	}
	return set
}

// LookupSpells answers lookup_spell.
func (s *Service) LookupSpells(ctx context.Context, req *lkv1.LookupSpellsRequest) (*lkv1.LookupResponse, error) {
	p, err := s.commonPlan(req.GetCommon())
	if err != nil {
		return nil, err
	}
	for _, l := range req.GetLevels() {
		if l < 0 || l > 9 {
			return nil, invalid("levels", "level %d is not in 0-9", l)
		}
	}
	if err := checkAll(values{"schools", req.GetSchools()}, values{"classes", req.GetClasses()}, values{"casting_times", req.GetCastingTimes()},
		values{"damage_types", req.GetDamageTypes()}, values{"saving_throws", req.GetSavingThrows()}); err != nil {
		return nil, err
	}
	lr, err := intRange("level_range", badgerstore.FieldLevel, req.GetLevelRange())
	if err != nil {
		return nil, err
	}
	p.kinds = spellKinds
	p.add(func(v *badgerstore.View, set *badgerstore.Set) {
		set.And(v.Postings(badgerstore.FieldKind, lkv1.Kind_KIND_SPELL.Slug()))
	})
	if levels := req.GetLevels(); len(levels) > 0 {
		p.add(func(v *badgerstore.View, set *badgerstore.Set) {
			var atLevel badgerstore.Set
			for _, l := range levels {
				x := float64(l)
				atLevel.Or(v.Range(badgerstore.FieldLevel, &x, &x))
			}
			set.And(atLevel)
		})
	}
	p.add(lr,
		keywords(badgerstore.FieldSchool, req.GetSchools(), nil),
		keywords(badgerstore.FieldClass, req.GetClasses(), nil),
		boolean(badgerstore.FieldConcentration, req.Concentration),
		boolean(badgerstore.FieldRitual, req.Ritual),
		keywords(badgerstore.FieldCastingTime, req.GetCastingTimes(), lkv1.CastingTimeKey),
		keywords(badgerstore.FieldDamageType, req.GetDamageTypes(), nil),
		boolean(badgerstore.FieldVerbal, req.Verbal),
		boolean(badgerstore.FieldSomatic, req.Somatic),
		boolean(badgerstore.FieldMaterial, req.Material),
		keywords(badgerstore.FieldSavingThrow, req.GetSavingThrows(), lkv1.AbilityName),
	)
	return s.lookup(ctx, p, req)
}

// LookupCreatures answers lookup_creature.
func (s *Service) LookupCreatures(ctx context.Context, req *lkv1.LookupCreaturesRequest) (*lkv1.LookupResponse, error) {
	p, err := s.commonPlan(req.GetCommon())
	if err != nil {
		return nil, err
	}
	if err := checkAll(values{"types", req.GetTypes()}, values{"sizes", req.GetSizes()}, values{"damage_immunities", req.GetDamageImmunities()},
		values{"damage_resistances", req.GetDamageResistances()}, values{"damage_vulnerabilities", req.GetDamageVulnerabilities()},
		values{"environments", req.GetEnvironments()}); err != nil {
		return nil, err
	}
	p.kinds = creatureKinds
	p.add(func(v *badgerstore.View, set *badgerstore.Set) {
		set.And(v.Postings(badgerstore.FieldKind, lkv1.Kind_KIND_CREATURE.Slug()))
	})
	if req.Cr != nil {
		cr := req.GetCr()
		if cr < 0 || cr > 30 {
			return nil, invalid("cr", "%g is not in 0-30", cr)
		}
		p.add(func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Range(badgerstore.FieldCR, &cr, &cr)) })
	}
	crr, err := doubleRange("cr_range", badgerstore.FieldCR, req.GetCrRange())
	if err != nil {
		return nil, err
	}
	ac, err := intRange("armor_class", badgerstore.FieldArmorClass, req.GetArmorClass())
	if err != nil {
		return nil, err
	}
	hp, err := intRange("hit_points", badgerstore.FieldHitPoints, req.GetHitPoints())
	if err != nil {
		return nil, err
	}
	p.add(crr, ac, hp)
	for _, a := range req.GetAbilities() {
		name := lkv1.AbilityName(a.GetAbility())
		if !lkv1.IsAbility(name) {
			return nil, invalid("abilities", "unknown ability %q", a.GetAbility())
		}
		f, err := intRange("abilities."+name, badgerstore.FieldAbilityPrefix+name, a.GetRange())
		if err != nil {
			return nil, err
		}
		p.add(f)
	}
	p.add(
		keywords(badgerstore.FieldCreatureType, req.GetTypes(), nil),
		keywords(badgerstore.FieldSize, req.GetSizes(), nil),
		boolean(badgerstore.FieldLegendary, req.Legendary),
		defenses(badgerstore.FieldDamageImmunity, req.GetDamageImmunities()),
		defenses(badgerstore.FieldDamageResistance, req.GetDamageResistances()),
		defenses(badgerstore.FieldDamageVulnerability, req.GetDamageVulnerabilities()),
		environments(req.GetEnvironments()),
	)
	return s.lookup(ctx, p, req)
}

// LookupEquipment answers lookup_equipment.
func (s *Service) LookupEquipment(ctx context.Context, req *lkv1.LookupEquipmentRequest) (*lkv1.LookupResponse, error) {
	p, err := s.commonPlan(req.GetCommon())
	if err != nil {
		return nil, err
	}
	if err := checkAll(values{"rarities", req.GetRarities()}, values{"damage_dice", req.GetDamageDice()}, values{"damage_types", req.GetDamageTypes()},
		values{"properties", req.GetProperties()}, values{"armor_categories", req.GetArmorCategories()}, values{"categories", req.GetCategories()}); err != nil {
		return nil, err
	}
	kf, kinds, err := kindFilter("kinds", req.GetKinds(), lkv1.EquipmentKinds())
	if err != nil {
		return nil, err
	}
	p.kinds = kinds
	cost, err := doubleRange("cost_gp", badgerstore.FieldCost, req.GetCostGp())
	if err != nil {
		return nil, err
	}
	weight, err := doubleRange("weight_lb", badgerstore.FieldWeight, req.GetWeightLb())
	if err != nil {
		return nil, err
	}
	ac, err := intRange("armor_class", badgerstore.FieldArmorClass, req.GetArmorClass())
	if err != nil {
		return nil, err
	}
	props := make([]string, 0, len(req.GetProperties()))
	for _, x := range req.GetProperties() {
		props = append(props, strings.ToLower(strings.TrimSpace(x)))
	}
	p.add(kf,
		keywords(badgerstore.FieldRarity, req.GetRarities(), rarity),
		boolean(badgerstore.FieldAttunement, req.RequiresAttunement),
		boolean(badgerstore.FieldMagic, req.IsMagic),
		boolean(badgerstore.FieldSimple, req.IsSimple),
		keywords(badgerstore.FieldDamageDice, req.GetDamageDice(), nil),
		keywords(badgerstore.FieldDamageType, req.GetDamageTypes(), nil),
		allKeywords(badgerstore.FieldProperty, props),
		keywords(badgerstore.FieldArmorCategory, req.GetArmorCategories(), nil),
		cost, weight, ac,
		boolean(badgerstore.FieldStealthDisadvantage, req.StealthDisadvantage),
		keywords(badgerstore.FieldCategory, req.GetCategories(), func(s string) string { return strings.ReplaceAll(s, " ", "-") }),
	)
	return s.lookup(ctx, p, req)
}

// LookupCharacterOptions answers lookup_character_option.
func (s *Service) LookupCharacterOptions(ctx context.Context, req *lkv1.LookupCharacterOptionsRequest) (*lkv1.LookupResponse, error) {
	p, err := s.commonPlan(req.GetCommon())
	if err != nil {
		return nil, err
	}
	kf, kinds, err := kindFilter("kinds", req.GetKinds(), lkv1.CharacterOptionKinds())
	if err != nil {
		return nil, err
	}
	p.kinds = kinds
	p.add(kf)
	if err := checkText("parent", req.GetParent(), MaxNameLength); err != nil {
		return nil, err
	}
	if parent := strings.ToLower(strings.TrimSpace(req.GetParent())); parent != "" {
		p.add(func(v *badgerstore.View, set *badgerstore.Set) {
			set.And(v.Postings(badgerstore.FieldParent, parent, lkv1.Slugify(parent)))
		})
	}
	return s.lookup(ctx, p, req)
}

// LookupRules answers lookup_rule.
func (s *Service) LookupRules(ctx context.Context, req *lkv1.LookupRulesRequest) (*lkv1.LookupResponse, error) {
	p, err := s.commonPlan(req.GetCommon())
	if err != nil {
		return nil, err
	}
	kf, kinds, err := kindFilter("kinds", req.GetKinds(), lkv1.RuleKinds())
	if err != nil {
		return nil, err
	}
	p.kinds = kinds
	if err := checkValues("sections", req.GetSections()); err != nil {
		return nil, err
	}
	p.add(kf)
	if secs := req.GetSections(); len(secs) > 0 {
		var vals []string
		for _, x := range secs {
			x = strings.ToLower(strings.TrimSpace(x))
			vals = append(vals, x, lkv1.Slugify(x))
		}
		p.add(func(v *badgerstore.View, set *badgerstore.Set) {
			set.And(v.Postings(badgerstore.FieldSection, vals...))
		})
	}
	return s.lookup(ctx, p, req)
}

// lookup runs a plan: structured filters from the indexes, then the name,
// then either name order or semantic ranking; it reads only the entities
// it returns. A cursor continues a previous page of the same request.
func (s *Service) lookup(ctx context.Context, p *plan, req withCommon) (*lkv1.LookupResponse, error) {
	resp := &lkv1.LookupResponse{Ranking: lkv1.Ranking_RANKING_STRUCTURED, Warnings: p.warnings}
	hash := lookupHash(req)
	cur, err := decodeCursor(req.GetCommon().GetCursor(), hash)
	if err != nil {
		return nil, err
	}
	if p.docsSet && len(p.docs) == 0 {
		return resp, nil // documents=[]: nothing, without touching storage
	}
	var snap *snapshot
	if cur != nil && p.semantic != "" {
		if cur.Snapshot == "" {
			return nil, invalid("cursor", "was made for a different request; repeat the same arguments (only limit may change) or start again without a cursor")
		}
		snap, err = s.snaps.resume(ctx, cur, func(ctx context.Context) (string, lkv1.Ranking, string, error) {
			again := proto.Clone(req).(withCommon)
			again.GetCommon().Cursor = ""
			one := *p
			one.limit = 1
			resp, err := s.lookup(ctx, &one, again)
			return resp.GetNextCursor(), resp.GetRanking(), resp.GetFallbackReason(), err
		})
		if err != nil {
			return nil, err
		}
		defer s.snaps.release(snap)
		resp.Ranking, resp.FallbackReason = snap.ranking, snap.fallback
	}
	var qvec []float32
	if p.semantic != "" && snap == nil {
		var reason string
		qvec, reason = s.embedQuery(ctx, p.semantic)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resp.Ranking = lkv1.Ranking_RANKING_HYBRID
		if reason != "" {
			resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
			resp.FallbackReason = reason
		}
	}
	var closed relevance.Alias // a name not in open content, when nothing matched
	// The ranking's arrays, from the vector index's scores to the ranked
	// candidates: reused, at tens of thousands of candidates a call.
	sc := s.getScratch()
	defer s.putScratch(sc)
	var hits *vectorHits
	if qvec != nil {
		hits, err = s.searchVectors(ctx, qvec, sc, func(v *badgerstore.View) badgerstore.Set {
			cand := p.candidates(v)
			if p.name != "" && !cand.Empty() {
				cand, _, _ = matchAnyName(v, cand, p.name)
			}
			return cand
		})
		if err != nil {
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
		if p.name != "" && !cand.Empty() {
			filtered := cand
			cand, resp.NameMatch, resp.MatchedAlias = matchAnyName(v, cand, p.name)
			if resp.NameMatch == "" {
				// Nothing matched: suggestions (never substituted: the
				// results stay empty).
				resp.Suggestions = suggest(v, filtered, p.name)
				if a, ok := notOpen(p.name); ok {
					closed, resp.NotOpenContent = a, a.Known
				} else if sg, known := counterpart(v, filtered, p.name); sg != nil {
					resp.NotOpenContent = known
					resp.Suggestions = append([]*lkv1.NameSuggestion{sg}, resp.Suggestions...)
				}
			}
		}
		if p.semantic == "" {
			return namePage(v, cand, cur, p.limit, hash, !p.docsSet, resp)
		}
		if snap != nil {
			u := s.understand(v, p.semantic, p.kinds)
			resp.Understood = u.proto()
			if len(snap.groups) == 0 {
				return nil // ranked again on this node: nothing past the first result
			}
			g := snap.groups[0]
			items, more := g.page(v, cur.Offset, p.limit, cand)
			results, err := materialize(v, items, cand, !p.docsSet, resp.Ranking == lkv1.Ranking_RANKING_HYBRID)
			resp.Results, resp.Total = results, uint64(g.total)
			if more {
				resp.NextCursor = (&cursor{Query: hash, Snapshot: cur.Snapshot, Offset: cur.Offset + p.limit}).encode()
			}
			return err
		}
		var cos *cosine
		if hits != nil {
			if cos = hits.cosine(v, sc); cos == nil {
				resp.Ranking, resp.FallbackReason = lkv1.Ranking_RANKING_KEYWORD, hits.reason
			}
		}
		dedupe := !p.docsSet
		// The query path is search's: typo-tolerant names and aliases,
		// then what the question's words say of the fields.
		u := s.understand(v, p.semantic, p.kinds)
		ranks, said := cand, badgerstore.Set{}
		if dedupe {
			ranks, said = authoritative(v, cand, u, sayingAll(v, p.semantic))
		}
		how := rankHow{fuzzy: true, cosineWeight: s.opts.CosineWeight, u: u, said: said}
		how.prior, how.priorWeight = s.authorityPrior(v, p, u)
		items := rank(v, ranks, p.semantic, u.bm25(p.semantic), cos, how, sc)
		u.orderItems(v, items, how)
		resp.Understood = u.proto()
		ranked := newRanking(items)
		taken := map[kindName]bool{}
		items = first(ranked, dedupe, taken, p.limit+1)
		resp.Total = uint64(len(items))
		if len(items) > p.limit {
			// More follow: keep the candidates not ranked yet, so that
			// later pages rank them on demand into the same list whatever
			// is ingested meanwhile; the first page ranks only itself.
			total := distinct(v.NameIDs(), dedupe, items, ranked.h)
			resp.Total = uint64(total)
			g := newGroup(0, items, ranked, dedupe, taken, total)
			// The snapshot takes the array the candidates live in.
			arrays := [][]scored{sc.out}
			sc.out = nil
			id := s.snaps.put(&snapshot{groups: []*snapGroup{g}, ranking: resp.Ranking, fallback: resp.FallbackReason, arrays: arrays})
			resp.NextCursor = (&cursor{Query: hash, Snapshot: id, Offset: p.limit}).encode()
			items = items[:p.limit]
		}
		results, err := materialize(v, items, cand, dedupe, cos != nil)
		resp.Results = results
		return err
	})
	if err != nil {
		return nil, err
	}
	if closed.Name != "" {
		// Offer the open content nearest to what the name describes, only
		// now that nothing matched: no model call on an exact hit.
		if err := s.suggestByMeaning(ctx, p, closed.Name, resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// namePage fills resp with one page of cand in name order, after the
// cursor's entity when there is one. With fold (no documents filter), the
// copies of a name from other documents (same kind, following it in name
// order, the SRD 5.1 first: badgerstore's document rank) are the first
// copy's alternates rather than results of their own: with nine monster
// books, lookup_creature(name="goblin") is one stat block and the other
// books' goblins named, not four stat blocks.
func namePage(v *badgerstore.View, cand badgerstore.Set, cur *cursor, limit int, hash string, fold bool, resp *lkv1.LookupResponse) error {
	resp.Total = uint64(cand.Len())
	if cur != nil {
		if cur.Snapshot != "" || cur.Source != "" {
			return invalid("cursor", "was made for a different request; repeat the same arguments (only limit may change) or start again without a cursor")
		}
		v.After(&cand, cur.orderKey())
	}
	var (
		err  error
		last uint32 // the last slot taken, as a result or an alternate
		run  string // the name the results of byKind have
	)
	byKind := map[lkv1.Kind]*lkv1.Result{}
	v.InNameOrder(cand, func(slot uint32) bool {
		if fold {
			if name := v.NameKey(slot); name != run {
				run = name
				clear(byKind)
			} else if r := byKind[v.Kind(slot)]; r != nil {
				r.Alternates = append(r.Alternates, alternate(v, slot, r.GetEntity().GetName()))
				last = slot
				return true
			}
		}
		if len(resp.Results) == limit {
			// A result more follows: the page ends after the last slot
			// taken, alternates included.
			k := v.OrderKey(last)
			resp.NextCursor = (&cursor{Query: hash, Name: k.Name, DocRank: k.DocRank, Key: k.Key}).encode()
			return false
		}
		var e *lkv1.Entity
		if e, err = v.Entity(slot); err != nil {
			return false
		}
		r := &lkv1.Result{Entity: e, Uri: lkv1.EntityURI(e.GetKey())}
		resp.Results = append(resp.Results, r)
		byKind[v.Kind(slot)] = r
		last = slot
		return true
	})
	for _, r := range resp.Results {
		nameSameBook(v, r)
	}
	return err
}

// embedQuery embeds q within the configured timeout. On failure it returns
// no vector and the reason, and the caller ranks by keywords.
func (s *Service) embedQuery(ctx context.Context, q string) ([]float32, string) {
	if s.emb == nil {
		s.fallback("no_model")
		return nil, "semantic ranking unavailable: no embedding model"
	}
	lower := s.model().Lowercase
	if s.opts.LowercaseQueries != nil {
		lower = *s.opts.LowercaseQueries
	}
	if lower {
		q = strings.ToLower(q)
	}
	if v, ok := s.cache.get(q); ok {
		return v, ""
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.SemanticTimeout)
	defer cancel()
	type result struct {
		vecs [][]float32
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		vecs, err := s.emb.Embed(ctx, []string{q})
		ch <- result{vecs, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	switch {
	case r.err == nil && len(r.vecs) == 1 && len(r.vecs[0]) > 0:
		s.cache.put(q, r.vecs[0])
		return r.vecs[0], ""
	case errors.Is(r.err, context.DeadlineExceeded):
		s.fallback("timeout")
		s.log.Warn("embedding the query timed out; keyword ranking", "timeout", s.opts.SemanticTimeout)
		return nil, fmt.Sprintf("semantic ranking unavailable: embedding the query took over %s", s.opts.SemanticTimeout)
	case r.err == nil:
		r.err = errors.New("the model returned no vector")
	}
	s.fallback("model_error")
	s.log.Warn("embedding the query failed; keyword ranking", "err", r.err)
	return nil, "semantic ranking unavailable: " + r.err.Error()
}

// vectorHits are a semantic query's similarities from the vector index,
// by candidate, or the reason there are none. The candidates are named by
// key and by the slot they had when they were read.
type vectorHits struct {
	candidateKeys
	writes uint64    // the store's write count when keys were read
	scores []float32 // NaN: the index does not hold the key
	reason string    // set: no similarities, rank by keywords
}

// candidateKeys are a candidate set's keys and slots in slot order,
// remembered by the view until the next write: every search asks the
// vector index about the same thousands of candidates.
type candidateKeys struct {
	keys  []string
	slots []uint32
}

// searchVectors scores the entities candidates picks by cosine similarity
// to qvec through the vector index (embedded or Qdrant). It reads their
// keys in one view and searches after closing it: a Qdrant call can take up
// to the semantic timeout, and a view held across it would keep writers
// waiting (and, behind a waiting writer, every other reader). On failure
// or timeout the reason is set and the caller ranks by keywords. The
// scores are in sc's buffer.
func (s *Service) searchVectors(ctx context.Context, qvec []float32, sc *scratch, candidates func(*badgerstore.View) badgerstore.Set) (*vectorHits, error) {
	idx := s.store.VectorIndex()
	h := &vectorHits{}
	fits := false
	err := s.store.View(ctx, func(v *badgerstore.View) error {
		ok, dims := v.HasVectors()
		if fits = ok && dims == len(qvec) && idx != nil; !fits {
			return nil
		}
		cand := candidates(v)
		ck := v.Memo("candidates\x00"+cand.Fingerprint(), func() any {
			ck := &candidateKeys{keys: make([]string, 0, cand.Len()), slots: make([]uint32, 0, cand.Len())}
			cand.Each(func(slot uint32) bool {
				ck.keys = append(ck.keys, v.Key(slot))
				ck.slots = append(ck.slots, slot)
				return true
			})
			return ck
		}).(*candidateKeys)
		h.candidateKeys, h.writes = *ck, v.Writes()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !fits {
		s.fallback("vectors")
		return &vectorHits{reason: "no stored vectors fit the query model"}, nil
	}
	if len(h.keys) == 0 {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.SemanticTimeout)
	defer cancel()
	// Every candidate is scored, in candidate order: no ranking in the
	// index and no lookup of its hits by key here.
	h.scores, err = idx.Scores(ctx, qvec, h.keys, sc.vscores)
	if err == nil {
		sc.vscores = h.scores
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		s.fallback("timeout")
		s.log.Warn("vector search timed out; keyword ranking", "timeout", s.opts.SemanticTimeout)
		return &vectorHits{reason: fmt.Sprintf("semantic ranking unavailable: the vector search took over %s", s.opts.SemanticTimeout)}, nil
	case err != nil:
		s.fallback("vector_index")
		s.log.Warn("vector search failed; keyword ranking", "backend", idx.Backend(), "err", err)
		return &vectorHits{reason: "semantic ranking unavailable: the vector index failed"}, nil
	}
	return h, nil
}

// cosine returns the similarities by slot of v, or nil when the search
// failed. Entities written since the search have none. A candidate keeps
// its slot unless a write since removed it (and may have given its slot to
// another entity): then its key finds it, if it is still there.
func (h *vectorHits) cosine(v *badgerstore.View, sc *scratch) *cosine {
	if h.reason != "" {
		return nil
	}
	n := v.Capacity()
	cos := &cosine{scores: floats(&sc.cos, n)}
	sc.with.Reset()
	// Without a write between the two views every slot still holds its
	// key: no need to look.
	unchanged := v.Writes() == h.writes
	for i, key := range h.keys {
		score := h.scores[i]
		if score != score { // NaN: not in the index
			continue
		}
		slot := h.slots[i]
		if !unchanged && (int(slot) >= n || v.Key(slot) != key) {
			var ok bool
			if slot, ok = v.Slot(key); !ok {
				continue
			}
		}
		cos.scores[slot] = float64(score)
		sc.with.Add(slot)
	}
	cos.with = sc.with
	return cos
}

func (s *Service) fallback(reason string) {
	if s.opts.Metrics != nil {
		s.opts.Metrics.fallbacks.WithLabelValues(reason).Inc()
	}
}

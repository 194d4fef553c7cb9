package query

import (
	"slices"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Tier points per soft filter: an entity matching it earns tierMatch, one
// whose kind lacks the field tierNone, one contradicting it nothing.
// Within a tier a superlative's order adds less than a point.
const (
	tierMatch = 2
	tierNone  = 1
	// maxOrdered bounds the best matches a superlative orders (it reads
	// each one's entity).
	maxOrdered = 24
	// namedSim is the name similarity a name said in a question scores as.
	namedSim = 0.8
)

// bm25 is what a lookup's BM25 reads of the question q: its words not
// read as filters, or all of q when nothing was understood or nothing
// else is left ("fire damage": the texts saying it most rank first in
// its tier), never the words framing the question (unframed). Search
// reads all of q but the "mean" of its frame: a term is what makes a
// search result (a hit), and what the question says literally is never
// dropped.
func (u *understanding) bm25(q string) string {
	if u == nil {
		return unframed(q, false)
	}
	return u.terms
}

// mark ranks an item by what was understood (rank calls it as it scores
// each): the item's tier is its points over the soft filters, so that
// what matches ranks above what contradicts whatever the scores; the rest
// of the question, when the filters' words are taken out of it, is
// matched against names as search matches a whole query ("firbolt
// cantrip": Fire Bolt). Only a name the rest matches changes a score (as
// search's names do). What it reads of the view was read once by
// prepare: it costs a few bit tests. Without a superlative the tier goes
// into the score at once; with one, orderItems does it.
func (u *understanding) mark(x *scored, prior *badgerstore.Set) {
	x.tier = u.tierOf(x.slot)
	if u.named.Has(x.slot) {
		x.hit = true
		if ns := u.nameScore[x.slot]; ns > x.score {
			x.score, x.named = ns, true
		}
	}
	if u.order == nil {
		x.tier += u.priorTier(x.slot, prior)
		x.score += tierScale * x.tier
	}
}

// priorTier is what the authority prior (authorityPrior) adds to slot's
// tier when the question's words were read as filters: among the
// entities that answer them equally well, the SRDs' first ("stop enemies
// from moving": Hold Person and Web before another book's spell that
// holds too and says "enemies" more). Less than a tier point: never
// above what answers better; added after a superlative's order.
func (u *understanding) priorTier(slot uint32, prior *badgerstore.Set) float64 {
	if prior == nil || u.complete == 0 || !prior.Has(slot) {
		return 0
	}
	return priorTierPoints
}

// priorTierPoints is the authority prior in tier points (priorTier):
// below the least step of a superlative's order (a half point).
const priorTierPoints = 0.25

// orderItems orders the best matches of the top tier by the superlative's
// field, if the question says one, and puts the tiers into the scores:
// the order moves items within their tier.
func (u *understanding) orderItems(v *badgerstore.View, items []scored, how rankHow) {
	if u == nil || u.order == nil {
		return
	}
	u.order.apply(v, items, u.complete)
	for i := range items {
		items[i].tier += u.priorTier(items[i].slot, how.prior)
		items[i].score += tierScale * items[i].tier
		how.lift(&items[i])
	}
}

// apply orders the best matches of the top tier by the field: those of a
// kind having the field, at most maxOrdered of them, the best scores
// first. When filters made the tiers (complete > 0), the top tier is the
// highest any item reaches and every item in it matches the question,
// whatever its text's words (the filters' words are not among BM25's
// terms: "heavy armor with the best armor class" orders Plate, whose
// text says none of the others); otherwise only the hits within
// relevance.RelativeFloor of the best score match the rest of the
// question. They rise above the rest of their tier, and no further.
func (o *ordering) apply(v *badgerstore.View, items []scored, complete float64) {
	filtered := complete > 0
	top, best := -1.0, 0.0
	for _, x := range items {
		if !x.hit && !filtered {
			continue
		}
		if x.tier > top {
			top, best = x.tier, 0
		}
		if x.tier == top {
			best = max(best, x.score)
		}
	}
	type valued struct {
		i     int
		value float64
	}
	// Those without a value cannot be ordered: left out before the best
	// are chosen, so that "cheapest heavy armor" orders the armor with a
	// price, not the first magic armors (none has one).
	var withValue badgerstore.Set
	if o.column != "" {
		withValue = v.Range(o.column, nil, nil)
	}
	var chosen []valued
	for i, x := range items {
		if x.tier == top && (filtered || x.hit && x.score >= relevance.RelativeFloor*best) && slices.Contains(o.kinds, v.Kind(x.slot)) &&
			(o.column == "" || withValue.Has(x.slot)) {
			chosen = append(chosen, valued{i: i})
		}
	}
	slices.SortFunc(chosen, func(a, b valued) int { return cmpScore(items[a.i], items[b.i]) })
	chosen = chosen[:min(len(chosen), maxOrdered)]
	kept := chosen[:0]
	for _, c := range chosen {
		e, err := v.Entity(items[c.i].slot)
		if err != nil {
			continue // unreadable: left in score order
		}
		if x, ok := o.value(e); ok {
			c.value = x
			kept = append(kept, c)
		}
	}
	slices.SortStableFunc(kept, func(a, b valued) int {
		switch {
		case a.value == b.value:
			return 0
		case (a.value > b.value) == o.desc:
			return -1
		}
		return 1
	})
	for r, c := range kept {
		// In (top+0.5, top+1): above the tier's other items, in order.
		items[c.i].tier = top + 0.5 + 0.49*float64(len(kept)-r)/float64(len(kept))
	}
}

// holders are the entities a filter on field applies to: those of the
// kinds holding it (a spell with no damage type contradicts "fire
// damage"), the magic items made from such a kind, and any other holding
// a value of it, remembered by the view until the next write.
func holders(v *badgerstore.View, field string) badgerstore.Set {
	return v.Memo("holders\x00"+field, func() any {
		if field == badgerstore.FieldEnvironment {
			// Only some books give their creatures environments: one
			// without any does not contradict one.
			var vals []string
			v.Values(field, func(val string, _ int) { vals = append(vals, val) })
			return v.Postings(field, vals...)
		}
		slugs := make([]string, 0, len(fieldKinds[field]))
		for _, k := range fieldKinds[field] {
			slugs = append(slugs, k.Slug())
		}
		set := v.Postings(badgerstore.FieldKind, slugs...)
		if slices.Contains(fieldKinds[field], lkv1.Kind_KIND_WEAPON) {
			// A magic item made from a weapon holds the weapon's fields
			// where it has no value too: a Net, which deals no damage,
			// contradicts "fire damage".
			set.Or(v.Postings(badgerstore.FieldSimple, "true", "false"))
		}
		set.Or(v.Postings(field, "true", "false"))
		set.Or(v.Range(field, nil, nil))
		var vals []string
		v.Values(field, func(val string, _ int) { vals = append(vals, val) })
		set.Or(v.Postings(field, vals...))
		if field == badgerstore.FieldDamageType {
			set.Or(v.Postings(badgerstore.FieldDamageDealt, vals...)) // damageFilter
		}
		return set
	}).(badgerstore.Set)
}

// cmpScore orders by score, best first.
func cmpScore(a, b scored) int {
	if better(a, b) {
		return -1
	}
	if better(b, a) {
		return 1
	}
	return 0
}

// answers reports whether the question's words were read as filters on
// what entities are or do (not the kind alone, which every entity of it
// matches): matching them all then makes a hit, and picks the copy of a
// name that is ranked (authoritative).
func (u *understanding) answers() bool {
	return u != nil && u.complete > 0 && u.onFields
}

// matchesAll reports whether x matches every soft filter: such an item is
// kept in a search whatever its score.
func (u *understanding) matchesAll(x scored) bool {
	return u != nil && u.complete > 0 && x.tier >= u.complete
}

// namedClasses are the classes named values.
func namedClasses(v *badgerstore.View, values []string) badgerstore.Set {
	classes := v.Postings(badgerstore.FieldName, values...)
	classes.And(v.Postings(badgerstore.FieldKind, lkv1.Kind_KIND_CLASS.Slug()))
	return classes
}

// prepared is a soft filter read against a view: the entities earning
// tierMatch by it (those it applies to and that match it, or that do not
// when negated) and those it applies to; the others earn tierNone.
type prepared struct {
	match, applies badgerstore.Set
}

// prepare reads the soft filters (and the documents, one more) against v,
// the tier of an entity matching them all, and the names the question
// says (u.named) with the score each earns.
func (u *understanding) prepare(v *badgerstore.View, q string) {
	u.prepared = make([]prepared, 0, len(u.filters)+1)
	add := func(match, applies badgerstore.Set, negated bool) {
		p := prepared{applies: applies}
		if negated {
			applies.Each(func(slot uint32) bool {
				if !match.Has(slot) {
					p.match.Add(slot)
				}
				return true
			})
		} else {
			p.match = match.Clone()
			p.match.And(applies)
		}
		u.prepared = append(u.prepared, p)
	}
	for _, f := range u.filters {
		match, applies := f.match(v), holders(v, f.field)
		if f.field == badgerstore.FieldClass && !f.negated {
			// A class is what its name says as much as its spells are:
			// "what can a 1st level paladin do" ranks the Paladin with
			// the paladin spells (its name puts it first among them);
			// "paladin spells" still puts the spells first, by the kind.
			classes := namedClasses(v, f.values)
			match, applies = match.Clone(), applies.Clone() // shared (memos)
			match.Or(classes)
			applies.Or(classes)
		}
		add(match, applies, f.negated)
	}
	if len(u.docs) > 0 {
		add(v.Postings(badgerstore.FieldDocument, u.docs...), v.All(), false)
	}
	u.complete = float64(tierMatch * len(u.prepared))
	u.onFields = len(u.docs) > 0 || slices.ContainsFunc(u.filters, func(f softFilter) bool { return f.field != badgerstore.FieldKind })

	u.nameScore = map[uint32]float64{}
	name := func(set badgerstore.Set, score float64) {
		set.Each(func(slot uint32) bool {
			u.named.Add(slot)
			u.nameScore[slot] = max(u.nameScore[slot], score)
			return true
		})
	}
	// A name the question says ranks above every match of its other
	// words, below a near name of the whole question.
	for _, n := range u.names {
		named := v.Postings(badgerstore.FieldName, n)
		name(named, relevance.NearNameScore(namedSim))
		// A feature's name names what has it ("how does sneak attack
		// work": the rogue), unless something bears the name itself ("how
		// does spellcasting work": the rules, not every caster class).
		if named.Empty() {
			name(v.Postings(badgerstore.FieldFeature, n), relevance.NearNameScore(namedSim))
		}
	}
	// A class read as a spell filter ("wizard spell slots") names the
	// class too, for the kinds that hold classes.
	for _, f := range u.filters {
		if f.field == badgerstore.FieldClass && !f.negated {
			name(namedClasses(v, f.values), relevance.NearNameScore(namedSim))
		}
	}
	if rest := u.rest; rest != "" && rest != relevance.NormalizeName(q) {
		name(v.Postings(badgerstore.FieldName, rest), relevance.NearNameScore(1))
		alias, _ := matchAliasName(v, v.All(), rest)
		name(alias, relevance.AliasScore)
		for n, sim := range fuzzyNames(v, rest) {
			name(v.Postings(badgerstore.FieldName, n), relevance.NearNameScore(sim))
		}
	}
}

// tierOf is slot's points over the prepared soft filters.
func (u *understanding) tierOf(slot uint32) float64 {
	t := 0.0
	for i := range u.prepared {
		p := &u.prepared[i]
		switch {
		case p.match.Has(slot):
			t += tierMatch
		case !p.applies.Has(slot):
			t += tierNone
		}
	}
	return t
}

// proto is what was understood, as the response reports it.
func (u *understanding) proto() *lkv1.Understood {
	if u == nil || len(u.filters) == 0 && len(u.docs) == 0 && u.order == nil {
		return nil
	}
	out := &lkv1.Understood{Documents: u.docs}
	for _, f := range u.filters {
		field := f.report
		if field == "" {
			field = reported(f.field)
		}
		out.Filters = append(out.Filters, &lkv1.UnderstoodFilter{Field: field, Values: f.values, Negated: f.negated, Words: f.words})
	}
	if u.order != nil {
		out.OrderBy, out.Descending = u.order.field, u.order.desc
	}
	return out
}

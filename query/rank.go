package query

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// scored is a candidate with its mixed score in [0, 1], and what dedupe
// and later pages read of it (ref), copied from the view once in slot
// order: taking results in score order then reads no entity's slot.
type scored struct {
	score float64
	slot  uint32
	// tier: how well it fits what the question's words say of its fields
	// (understanding.apply); a higher tier ranks first: apply adds
	// tierScale times it to score, so that better compares one number
	// (comparing tiers apart doubled the ranking's cost: the branches are
	// unpredictable). shown is the score without it. It holds the
	// authority prior's lift too (rankHow.lift), which orders and is no
	// similarity.
	tier  float64
	ref   badgerstore.SlotRef
	exact bool
	// hit: the candidate matched a query term, its name, or (semantic)
	// is in the upper part of the cosine range.
	hit bool
	// named: understanding.mark raised its score as a name the question
	// says.
	named bool
}

// cosine is the candidates' cosine similarity to the query, from the
// vector index: scores by slot, for the slots in with.
type cosine struct {
	scores []float64
	with   badgerstore.Set
}

// scratch holds the arrays one ranking needs, kept between calls (see
// Service.scratch): ranking the whole catalogue takes a float per slot
// twice and a scored per candidate, about 250 KB, and fresh ones cost more
// to zero (and to collect) than the ranking spends using them.
type scratch struct {
	bm, cos []float64
	out     []scored
	// vscores are the vector index's scores of the candidates, in their
	// order (vectorHits.scores), with the slots that have one.
	vscores []float32
	with    badgerstore.Set
	// kinds partitions search's results by kind.
	kinds []scored
	// snaps gives out and kinds the arrays of dropped snapshots: a first
	// page's snapshot takes the arrays its rankings live in.
	snaps *snapshots
}

// array returns an empty array with room for n candidates: a dropped
// snapshot's, else a new one.
func (sc *scratch) array(n int) []scored {
	if sc.snaps == nil {
		return make([]scored, 0, n)
	}
	return sc.snaps.array(n)
}

// floats returns buf resized to n and zeroed.
func floats(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// getScratch returns arrays for one ranking; give them back with
// putScratch once nothing refers to them.
func (s *Service) getScratch() *scratch {
	sc := s.scratch.Get().(*scratch)
	sc.snaps = s.snaps
	return sc
}

func (s *Service) putScratch(sc *scratch) { s.scratch.Put(sc) }

// rankHow is how rank scores: fuzzy adds typo-tolerant name matching
// (search); hitsOnly leaves out the candidates that are not hits (search
// shows only hits): most of a large store, which then cost a few reads
// each instead of a score and a place in the result. u, when set, marks
// each candidate with what the question says of its fields
// (understanding.mark). prior, when set, lifts the scores of the
// candidates in it by priorWeight (authorityPrior, lift).
type rankHow struct {
	fuzzy, hitsOnly bool
	cosineWeight    float64
	u               *understanding
	prior           *badgerstore.Set
	priorWeight     float64
	// said are the candidates whose text, or a copy's they stand for,
	// has every word of the question (authoritative): hits.
	said badgerstore.Set
}

// lift raises x's score by the authority prior when x is in how.prior: a
// score s below the name floor (no name matched) becomes s + w(floor - s),
// above what only shares its words, in its own order, never past a name.
// The lift goes into the tier as well, so that shown (the similarity) and
// search's floor are as without it: the prior orders, and changes neither
// what matches nor how well.
func (how rankHow) lift(x *scored) {
	if how.prior == nil || !how.prior.Has(x.slot) || x.exact {
		return
	}
	s := x.shown()
	if s >= relevance.NameFloor {
		return
	}
	boost := how.priorWeight * (relevance.NameFloor - s)
	x.score += boost
	x.tier += boost / tierScale
}

// rank scores the candidates: cosine similarity (cos nil: keywords only)
// and BM25 over the same texts, each rescaled to [0, 1] over the
// candidates and mixed with equal weights; an exact name match scores 1
// and comes first. BM25 reads terms (text, or its words not read as
// filters: understanding.bm25). The result lives in sc.
func rank(v *badgerstore.View, cand badgerstore.Set, text, terms string, cos *cosine, how rankHow, sc *scratch) []scored {
	fuzzy, hitsOnly, cosineWeight, u := how.fuzzy, how.hitsOnly, how.cosineWeight, how.u
	n := v.Capacity()
	bm := floats(&sc.bm, n)
	relevance.BM25(v, relevance.QueryTermsFor(v, terms), cand, bm)
	bmLo, bmHi := minMax(cand, bm)
	var cs []float64
	var withVec badgerstore.Set
	var csLo, csHi float64
	if cos != nil {
		cs, withVec = cos.scores, cos.with
		csLo, csHi = minMax(withVec, cs)
	}
	lower := strings.ToLower(strings.TrimSpace(text))
	exact := v.Postings(badgerstore.FieldName, lower)
	var near map[string]float64
	var alias badgerstore.Set
	if fuzzy {
		near = fuzzyNames(v, lower)
		alias, _ = matchAliasName(v, cand, text)
	}
	out := sc.out[:0]
	if m := cand.Len(); cap(out) < m {
		out = sc.array(m) // once, not doubling up to it
	}
	cand.Each(func(slot uint32) bool {
		c := 0.0 // the rescaled cosine; 0 without one
		if withVec.Has(slot) {
			c = relevance.Rescale(cs[slot], csLo, csHi)
		}
		// The hit rules, once: a query term, the upper part of the cosine
		// range, the exact name, an alias or a near name (fuzzy only), a
		// name said in the question (understanding.mark), or what the
		// question's words say of every field (Spider Climb for "a way to
		// climb", whatever its text's words).
		hit := bm[slot] > 0 || c >= relevance.SemanticHitAt || exact.Has(slot) || alias.Has(slot) || how.said.Has(slot) ||
			nearName(v, near, slot) || (u != nil && (u.named.Has(slot) || u.answers() && u.tierOf(slot) >= u.complete))
		if hitsOnly && !hit {
			return true
		}
		x := scored{slot: slot, ref: v.Ref(slot), hit: hit}
		b := relevance.Rescale(bm[slot], bmLo, bmHi)
		if cos != nil {
			x.score = cosineWeight*c + (1-cosineWeight)*b
		} else {
			x.score = b
		}
		if fuzzy {
			// Name matches rank above everything else: near names (typos)
			// in (NameFloor, 1), the rest scaled below NameFloor.
			x.score *= relevance.NameFloor
			if len(near) > 0 { // else no read of the slot's name
				if sim, ok := near[v.NameKey(slot)]; ok {
					x.score = relevance.NearNameScore(sim)
				}
			}
			if alias.Has(slot) {
				x.score = relevance.AliasScore
			}
		}
		if exact.Has(slot) {
			x.score, x.exact = 1, true
		}
		if u != nil {
			u.mark(&x, how.prior)
		}
		if u == nil || u.order == nil { // else orderItems lifts it
			how.lift(&x)
		}
		out = append(out, x)
		return true
	})
	sc.out = out
	return out
}

// nearName reports whether slot's name is among near (typo-tolerant name
// matches); an empty near reads no name.
func nearName(v *badgerstore.View, near map[string]float64, slot uint32) bool {
	if len(near) == 0 {
		return false
	}
	_, ok := near[v.NameKey(slot)]
	return ok
}

// tierScale is what a tier point adds to a score: more than any score,
// and than the least step of a superlative's order within a tier.
const tierScale = 1 << 12

// shown is x's score without its tier, in [0, 1].
func (x scored) shown() float64 { return x.score - tierScale*x.tier }

// better orders scored candidates: exact names first, then by score (tier
// included), then by slot for a stable order.
func better(a, b scored) bool {
	if a.exact != b.exact {
		return a.exact
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.slot < b.slot
}

// ranking yields scored candidates best first. It is a binary heap: only
// as many candidates as are taken get ordered, not all of them; and it is
// made a heap only when a later page asks (a first page selects its few
// best without it: first).
type ranking struct {
	h      []scored
	heaped bool
}

func newRanking(items []scored) *ranking { return &ranking{h: items} }

// heapify makes h a heap, once.
func (r *ranking) heapify() {
	if r.heaped {
		return
	}
	for i := len(r.h)/2 - 1; i >= 0; i-- {
		r.down(i)
	}
	r.heaped = true
}

// best returns the best candidate (r is not empty).
func (r *ranking) best() scored {
	if r.heaped {
		return r.h[0]
	}
	b := r.h[0]
	for _, x := range r.h[1:] {
		if better(x, b) {
			b = x
		}
	}
	return b
}

func (r *ranking) down(i int) {
	h := r.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		best := l
		if rr := l + 1; rr < len(h) && better(h[rr], h[l]) {
			best = rr
		}
		if !better(h[best], h[i]) {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}

// next returns the best remaining candidate.
func (r *ranking) next() (scored, bool) {
	if len(r.h) == 0 {
		return scored{}, false
	}
	r.heapify()
	top := r.h[0]
	last := len(r.h) - 1
	r.h[0] = r.h[last]
	r.h = r.h[:last]
	r.down(0)
	return top, true
}

func minMax(set badgerstore.Set, xs []float64) (lo, hi float64) {
	first := true
	set.Each(func(s uint32) bool {
		x := xs[s]
		if first {
			lo, hi, first = x, x, false
		}
		lo, hi = min(lo, x), max(hi, x)
		return true
	})
	return lo, hi
}

// fuzzyNames is nearNames(q) unless some name contains q, remembered
// until the next write: both scan every name, on every search.
func fuzzyNames(v *badgerstore.View, q string) map[string]float64 {
	if !nameLike(q) {
		return nil
	}
	near, _ := v.Memo("fuzzy\x00"+q, func() any {
		if nameContains(v, q) {
			return map[string]float64(nil)
		}
		return nearNames(v, q)
	}).(map[string]float64)
	return near
}

// nearNames returns the stored names within typo distance of q, with their
// similarity (1 - edit distance / length) of at least
// relevance.MinFuzzySim. q is nameLike (fuzzyNames checks it).
func nearNames(v *badgerstore.View, q string) map[string]float64 {
	qr := []rune(q)
	out := map[string]float64{}
	for _, name := range relevance.NamesSharingTrigrams(v, q, 0.35) {
		nr := []rune(name)
		longest := max(len(nr), len(qr))
		maxDist := int(float64(longest) * (1 - relevance.MinFuzzySim))
		if max(len(nr)-len(qr), len(qr)-len(nr)) > maxDist {
			continue
		}
		d := relevance.EditDistance(qr, nr)
		if sim := 1 - float64(d)/float64(longest); sim >= relevance.MinFuzzySim {
			out[name] = sim
		}
	}
	return out
}

// nameLike reports whether q could be a (misspelt) name: names are short,
// and a long question is not one.
func nameLike(q string) bool {
	n := utf8.RuneCountInString(q)
	return n >= 4 && n <= 64 && len(strings.Fields(q)) <= 5
}

// nameContains reports whether some name contains q as whole words: then
// q is a word people use in names ("dragon"), not a misspelt name. A name
// holding q cut short ("bag of holdin" in "bag of holding") does not count:
// that is a misspelt name.
func nameContains(v *badgerstore.View, q string) bool {
	// A name containing q has every trigram inside q: only the names with
	// q's rarest one need a look, not every name.
	qr := []rune(q)
	if len(qr) < 3 {
		found := false
		v.Names(func(name string) bool {
			found = containsWords(name, q)
			return !found
		})
		return found
	}
	var rarest []uint32
	for i := 0; i+3 <= len(qr); i++ {
		ids := v.NamesWithTrigram(string(qr[i : i+3]))
		if i == 0 || len(ids) < len(rarest) {
			rarest = ids
		}
	}
	for _, id := range rarest {
		if containsWords(v.NameOfID(id), q) {
			return true
		}
	}
	return false
}

// containsWords reports whether s holds q with no letter or digit right
// before or after it.
func containsWords(s, q string) bool {
	for i := 0; i+len(q) <= len(s); {
		j := strings.Index(s[i:], q)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(q)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
	return false
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// kindName is what dedupe compares: one result per kind and name (its
// ID in the view).
type kindName struct {
	kind lkv1.Kind
	name uint32
}

// take pops up to limit results from the ranking (limit <= 0: all of
// them), skipping with dedupe an entity whose kind and name an earlier
// result has (taken records them, across calls). It reads no entity.
func take(r *ranking, dedupe bool, taken map[kindName]bool, limit int) []scored {
	var out []scored
	for limit <= 0 || len(out) < limit {
		sc, ok := r.next()
		if !ok {
			break
		}
		if claim(dedupe, taken, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// claim records x's kind and name in taken and reports whether no earlier
// result had them; without dedupe every result is new.
func claim(dedupe bool, taken map[kindName]bool, x scored) bool {
	if !dedupe {
		return true
	}
	key := kindName{x.ref.Kind, x.ref.NameID}
	if taken[key] {
		return false
	}
	taken[key] = true
	return true
}

// first is take for a ranking's first page: the same results, and the
// same candidates left in r, without making r a heap. It selects the
// 2*limit best candidates in one pass (room for de-duplication) and takes
// from them in order; the rest wait, in no order, for a later page (most
// walks have none). At 22,000 candidates the heap was a fifth of a
// semantic lookup's time. If de-duplication leaves fewer than limit of
// the selected ones, it is take.
func first(r *ranking, dedupe bool, taken map[kindName]bool, limit int) []scored {
	k := 2 * limit
	if r.heaped || limit <= 0 || k*4 > len(r.h) {
		return take(r, dedupe, taken, limit)
	}
	// sel: indexes of the k best so far, best first. Most candidates
	// lose to the worst of them at once; the few that enter are inserted.
	h := r.h
	sel := make([]int32, 0, k+1)
	for i := range h {
		if len(sel) == k && !better(h[i], h[sel[k-1]]) {
			continue
		}
		at := sort.Search(len(sel), func(j int) bool { return better(h[i], h[sel[j]]) })
		sel = slices.Insert(sel, at, int32(i))
		sel = sel[:min(len(sel), k)]
	}
	var out []scored
	used := 0
	for _, i := range sel {
		if len(out) == limit {
			break
		}
		used++
		if claim(dedupe, taken, h[i]) {
			out = append(out, h[i])
		}
	}
	if len(out) < limit {
		// Duplicates used up the selection: undo, and order everything.
		if dedupe {
			for _, x := range out {
				delete(taken, kindName{x.ref.Kind, x.ref.NameID})
			}
		}
		return take(r, dedupe, taken, limit)
	}
	// Take out what was used, last index first, so that each index still
	// names its candidate when its turn comes.
	gone := sel[:used]
	slices.SortFunc(gone, func(a, b int32) int { return int(b - a) })
	for _, i := range gone {
		last := len(h) - 1
		h[i] = h[last]
		h = h[:last]
	}
	r.h = h
	return out
}

// distinct is how many results the candidates in lists make: with dedupe
// one per kind and name (names: View.NameIDs), else one each. It costs a
// pass over them, not a ranking.
func distinct(names int, dedupe bool, lists ...[]scored) int {
	n := 0
	if !dedupe {
		for _, l := range lists {
			n += len(l)
		}
		return n
	}
	seen := map[lkv1.Kind][]uint64{}
	var last lkv1.Kind = -1
	var words []uint64
	for _, l := range lists {
		for _, sc := range l {
			if sc.ref.Kind != last {
				last = sc.ref.Kind
				if words = seen[last]; words == nil {
					words = make([]uint64, (names+63)/64)
					seen[last] = words
				}
			}
			id := sc.ref.NameID
			if words[id/64]&(1<<(id%64)) == 0 {
				words[id/64] |= 1 << (id % 64)
				n++
			}
		}
	}
	return n
}

// materialize reads the entities of ranked results. With dedupe each
// result is the copy that was ranked (authoritative: the most
// authoritative copy of its name among the candidates, the SRD Fireball
// and not a supplement's, unless another answers the question better),
// and lists the other copies as alternates.
func materialize(v *badgerstore.View, items []scored, cand badgerstore.Set, dedupe, withScore bool) ([]*lkv1.Result, error) {
	out := make([]*lkv1.Result, 0, len(items))
	for _, sc := range items {
		res := &lkv1.Result{}
		if dedupe {
			// sc is the copy that was ranked: the most authoritative, or
			// the one answering the question's words (authoritative).
			same := v.Postings(badgerstore.FieldName, v.NameKey(sc.slot))
			same.And(cand)
			v.InNameOrder(same, func(slot uint32) bool {
				if slot != sc.slot && v.Kind(slot) == v.Kind(sc.slot) {
					res.Alternates = append(res.Alternates, alternate(v, slot, v.DisplayName(sc.slot)))
				}
				return true
			})
		}
		if withScore {
			score := min(max(sc.shown(), 0), 1)
			res.SimilarityScore = &score
		}
		e, err := v.Entity(sc.slot)
		if err != nil {
			return nil, err
		}
		res.Entity = e
		res.Uri = lkv1.EntityURI(e.GetKey())
		nameSameBook(v, res)
		out = append(out, res)
	}
	return out, nil
}

// newGroup keeps a ranking for later pages: first, the results already
// taken (the first page and one more), and the rest still unranked, to be
// ranked only as far as a later page asks. total is how many results the
// whole ranking makes (distinct).
func newGroup(kind lkv1.Kind, first []scored, rest *ranking, dedupe bool, taken map[kindName]bool, total int) *snapGroup {
	g := &snapGroup{kind: kind, total: total, order: slices.Clone(first), dedupe: dedupe, taken: taken}
	if len(rest.h) > 0 {
		// Not a copy: the snapshot takes the array the candidates live in
		// from the caller's scratch (snapshot.arrays).
		g.rest = rest
	}
	return g
}

// page returns the group's results from offset, at most limit of them,
// skipping entities that are gone (their slot's generation changed) or no
// longer pass the filters (cand), and whether more follow. It ranks the
// group's candidates as far as the page needs, once for every page after.
// An offset past the end (a snapshot ranked again on another node may be
// shorter than the one the cursor walked) is an empty last page.
func (g *snapGroup) page(v *badgerstore.View, offset, limit int, cand badgerstore.Set) (items []scored, more bool) {
	if offset < 0 || offset >= g.total || limit <= 0 {
		return nil, false
	}
	limit = min(limit, g.total-offset) // offset+limit cannot overflow
	g.mu.Lock()
	if need := offset + limit - len(g.order); need > 0 && g.rest != nil {
		g.order = append(g.order, take(g.rest, g.dedupe, g.taken, need)...)
		if len(g.rest.h) == 0 {
			g.rest, g.taken = nil, nil
		}
	}
	var window []scored
	if offset < len(g.order) {
		window = g.order[offset:min(offset+limit, len(g.order))]
	}
	g.mu.Unlock()
	for _, sc := range window {
		if sc.slot >= uint32(v.Capacity()) || v.Ref(sc.slot).Gen != sc.ref.Gen || !cand.Has(sc.slot) {
			continue
		}
		sc.hit = true
		items = append(items, sc)
	}
	return items, offset+limit < g.total
}

// documentRank orders documents for representing a folded group: the
// official SRDs first (5.1, then 5.2), then the core concepts, then the rest.
func documentRank(key string) int {
	switch key {
	case "srd-2014":
		return 0
	case "srd-2024":
		return 1
	case "core":
		return 2
	default:
		return 3
	}
}

// alternate is slot as a copy of the result named name: its own name only
// when it is another ("Crossbow, light" of "Light Crossbow").
func alternate(v *badgerstore.View, slot uint32, name string) *lkv1.Alternate {
	d := v.Document(slot)
	key := v.Key(slot)
	a := &lkv1.Alternate{
		Key:          key,
		Uri:          lkv1.EntityURI(key),
		DocumentKey:  d.GetKey(),
		DocumentName: d.GetName(),
		GameSystem:   d.GetGameSystem(),
	}
	if n := v.DisplayName(slot); n != name {
		a.Name = n
	}
	return a
}

// nameSameBook names by their section the alternates of r that share a
// book with r or with another alternate: entries of one name in one book
// are not copies of each other (SRD 5.1 has rules named Speed in Monsters,
// Movement and Races), and "also in SRD 5.1" twice says nothing of which
// is which. Only rules have sections; most results have no such entry,
// and then it reads nothing.
func nameSameBook(v *badgerstore.View, r *lkv1.Result) {
	books := map[string]int{r.GetEntity().GetDocument().GetKey(): 1}
	for _, a := range r.GetAlternates() {
		books[a.GetDocumentKey()]++
	}
	for _, a := range r.GetAlternates() {
		if books[a.GetDocumentKey()] < 2 {
			continue
		}
		e, err := v.EntityByKey(a.GetKey())
		if err != nil {
			continue
		}
		name := e.GetName()
		if s := e.GetRule().GetSectionName(); s != "" && !strings.EqualFold(s, name) {
			name += " (" + s + ")"
		}
		a.Name = name
	}
}

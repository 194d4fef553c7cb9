package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	ranking "lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// bestResult is the result of the highest similarity in any group (nil:
// none).
func bestResult(resp *lkv1.SearchResponse) *lkv1.Result {
	var best *lkv1.Result
	for _, g := range resp.GetGroups() {
		for _, r := range g.GetResults() {
			if best == nil || r.GetSimilarityScore() > best.GetSimilarityScore() {
				best = r
			}
		}
	}
	return best
}

func group(resp *lkv1.SearchResponse, k lkv1.Kind) []*lkv1.Result {
	for _, g := range resp.GetGroups() {
		if g.GetKind() == k {
			return g.GetResults()
		}
	}
	return nil
}

func TestSearch(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	search := func(t *testing.T, req *lkv1.SearchRequest) *lkv1.SearchResponse {
		t.Helper()
		resp, err := c.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	typos := []struct {
		query, want string
		kind        lkv1.Kind
	}{
		{"firbal", "Fireball", lkv1.Kind_KIND_SPELL},
		{"gelatinus cube", "Gelatinous Cube", lkv1.Kind_KIND_CREATURE},
		{"magic misile", "Magic Missile", lkv1.Kind_KIND_SPELL},
		{"Fireball", "Fireball", lkv1.Kind_KIND_SPELL},
	}
	for _, semantic := range []bool{true, false} {
		for _, tt := range typos {
			t.Run(tt.query, func(t *testing.T) {
				resp := search(t, &lkv1.SearchRequest{Query: tt.query, Semantic: proto.Bool(semantic)})
				got := names(group(resp, tt.kind))
				if len(got) == 0 || got[0] != tt.want {
					t.Errorf("semantic=%v: %s group = %v, want %q first", semantic, tt.kind.Slug(), got, tt.want)
				}
				if first := resp.GetGroups()[0].GetKind(); first != tt.kind {
					t.Errorf("first group is %s, want %s", first.Slug(), tt.kind.Slug())
				}
			})
		}
	}
	t.Run("cross-kind dragon", func(t *testing.T) {
		// Without the authority prior, which orders the SRDs' entries
		// first and leaves their similarity as it is, the similarity
		// orders the groups and their results.
		np := lkv1.NewQueryServiceClient(dial(t, query.NewService(snapshotStore(t), snap.emb, &query.Options{AuthorityPrior: -1}), nil))
		resp, err := np.Search(ctx, &lkv1.SearchRequest{Query: "dragon", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[lkv1.Kind]bool{}
		for _, g := range resp.GetGroups() {
			kinds[g.GetKind()] = true
			if len(g.GetResults()) > 5 {
				t.Errorf("%s group has %d results, limit is 5 per kind", g.GetKind().Slug(), len(g.GetResults()))
			}
		}
		if !kinds[lkv1.Kind_KIND_CREATURE] || len(kinds) < 3 {
			t.Errorf("groups %v, want creatures and at least two other kinds", kinds)
		}
		var prev float64 = 2
		for _, g := range resp.GetGroups() {
			best := g.GetResults()[0].GetSimilarityScore()
			if best > prev {
				t.Errorf("group %s (best %.3f) after a group with best %.3f; want groups by best result", g.GetKind().Slug(), best, prev)
			}
			prev = best
			for i, r := range g.GetResults() {
				s := r.GetSimilarityScore()
				if r.SimilarityScore == nil || s < 0 || s > 1 {
					t.Errorf("%s score %v, want in [0, 1]", r.GetEntity().GetName(), r.SimilarityScore)
				}
				if i > 0 && s > g.GetResults()[i-1].GetSimilarityScore() {
					t.Errorf("%s group not highest first", g.GetKind().Slug())
				}
			}
		}
	})
	t.Run("kinds and keyword only", func(t *testing.T) {
		resp := search(t, &lkv1.SearchRequest{Query: "fire", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL}, Semantic: proto.Bool(false)})
		if len(resp.GetGroups()) != 1 || resp.GetGroups()[0].GetKind() != lkv1.Kind_KIND_SPELL {
			t.Fatalf("groups %v, want spells only", resp.GetGroups())
		}
		if resp.GetRanking() != lkv1.Ranking_RANKING_KEYWORD || resp.GetFallbackReason() != "" {
			t.Errorf("ranking %v (%q), want KEYWORD as asked, no fallback", resp.GetRanking(), resp.GetFallbackReason())
		}
		for _, r := range resp.GetGroups()[0].GetResults() {
			if r.SimilarityScore != nil {
				t.Errorf("keyword result %s has a similarity score", r.GetEntity().GetName())
			}
		}
	})
	t.Run("same names folded unless documents are given", func(t *testing.T) {
		resp := search(t, &lkv1.SearchRequest{Query: "fireball", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL}})
		rs := group(resp, lkv1.Kind_KIND_SPELL)
		if n := names(rs); slices.Index(n, "Fireball") != 0 || slices.Index(n[1:], "Fireball") >= 0 {
			t.Fatalf("spells = %v, want one Fireball, first", n)
		}
		var alt []string
		for _, a := range rs[0].GetAlternates() {
			alt = append(alt, a.GetDocumentKey())
			if !strings.HasPrefix(a.GetUri(), lkv1.URIPrefix) || a.GetKey() == rs[0].GetEntity().GetKey() {
				t.Errorf("alternate %+v", a)
			}
		}
		if len(alt) == 0 {
			t.Errorf("Fireball has no alternates; want the other documents' Fireballs")
		}
		if d := rs[0].GetEntity().GetDocument().GetKey(); d != "srd-2014" || !slices.Contains(alt, "srd-2024") || !slices.Contains(alt, "a5e-ag") {
			t.Errorf("Fireball represented by %s with alternates %v; want the SRD 5.1 copy, the others (srd-2024, a5e-ag) as alternates", d, alt)
		}
		resp = search(t, &lkv1.SearchRequest{Query: "fireball", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL}, Documents: docs("srd-2014", "srd-2024")})
		rs = group(resp, lkv1.Kind_KIND_SPELL)
		if n := names(rs); len(n) < 2 || n[0] != "Fireball" || n[1] != "Fireball" || len(rs[0].GetAlternates()) != 0 {
			t.Errorf("with documents: %v, want both Fireballs listed, no alternates", n)
		}
		for _, r := range rs {
			if d := r.GetEntity().GetDocument().GetKey(); d != "srd-2014" && d != "srd-2024" {
				t.Errorf("result from %s; want only the documents asked", d)
			}
		}
	})
	t.Run("unknown document is empty, not an error", func(t *testing.T) {
		resp := search(t, &lkv1.SearchRequest{Query: "spell", Documents: docs("non-existent")})
		if len(resp.GetGroups()) != 0 || len(resp.GetWarnings()) == 0 {
			t.Errorf("groups %v, warnings %v; want none and a warning", resp.GetGroups(), resp.GetWarnings())
		}
	})
	t.Run("injection strings", func(t *testing.T) {
		for _, q := range []string{"Robert'; DROP TABLE spells; --", "%; DROP TABLE creatures; --"} {
			if _, err := c.Search(ctx, &lkv1.SearchRequest{Query: q}); err != nil {
				t.Errorf("Search(%q): %v", q, err)
			}
		}
	})
}

// TestSearch_NearNamesFollowWrites: the typo-tolerant names a search
// remembers for its text are forgotten when the catalogue changes, so a
// name written since is found through the same misspelling (one that
// only the near names catch: term correction keeps the first letter).
func TestSearch_NearNamesFollowWrites(t *testing.T) {
	snapshotStore(t)
	st, ws := srdSpellStore(t, nil)
	svc := query.NewService(st, snap.emb, nil)
	search := func() []string {
		t.Helper()
		resp, err := svc.Search(t.Context(), &lkv1.SearchRequest{Query: "Xorbax", Semantic: proto.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
		return names(group(resp, lkv1.Kind_KIND_SPELL))
	}
	if got := search(); slices.Contains(got, "Zorbax") {
		t.Fatalf("before the write: %v holds a spell not yet written", got)
	}
	e := proto.Clone(ws[0].Entity).(*lkv1.Entity)
	e.Key, e.Slug, e.Name, e.Description, e.HigherLevel, e.Blocks = "test:srd-2014:spell:zorbax", "zorbax", "Zorbax", "", "", nil
	if err := st.Apply(t.Context(), []badgerstore.Write{{Entity: e}}); err != nil {
		t.Fatal(err)
	}
	if got := search(); len(got) == 0 || got[0] != "Zorbax" {
		t.Errorf("after the write: %v, want Zorbax first (a near name of Xorbax)", got)
	}
}

// TestSearch_RanksOnlyHits: search ranks only the candidates that are
// hits, and keeps the very hits, scores and tiers that ranking every
// candidate keeps, over the real catalogue: terms, meaning, exact and
// misspelt names, aliases, names said in a question, understood filters.
// (The skip and the hit flag read one rule, so this checks that nothing
// else in the ranking depends on the candidates left out.)
func TestSearch_RanksOnlyHits(t *testing.T) {
	st := snapshotStore(t)
	svc := query.NewService(st, snap.emb, nil)
	ctx := context.Background()
	for _, q := range []string{
		"dragon breath", "fireball", "firbal", "healin word", "stop enemies from moving",
		"what does Fireball do", "CR 5 undead from the SRD", "a cantrip that deals fire damage",
		"bag of holding", "BoH", "one-handed weapon with reach", "a flying beast that breathes fire",
		"grappled", "thug", "androsphinx", "quipper", "feeblemind", "firbolt cantrip",
		"a 3rd-level firbal", "CR 1/2 gnol", "zzzz qqqq",
	} {
		for _, semantic := range []bool{true, false} {
			all, err := query.SearchHits(ctx, svc, q, false, semantic)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := query.SearchHits(ctx, svc, q, true, semantic)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(all, hits) {
				t.Errorf("%q (semantic %v): ranking only hits kept %d, ranking all %d; first difference: %s",
					q, semantic, len(hits), len(all), firstDiff(hits, all))
			}
			if semantic && q != "zzzz qqqq" && len(all) == 0 {
				t.Errorf("%q (semantic %v): no hits at all", q, semantic)
			}
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " | " + b[i]
		}
	}
	if len(a) > len(b) {
		return "extra " + a[len(b)]
	}
	if len(b) > len(a) {
		return "missing " + b[len(a)]
	}
	return "none"
}

// TestSearch_classNamedByFilter: a class a question reads as a spell
// filter ("wizard spell slots": wizard spells ranked first) is also the
// class it names: the class is on the first page, first among classes.
func TestSearch_classNamedByFilter(t *testing.T) {
	cl := client(t)
	for _, q := range []string{"wizard spell slots", "how many spell slots does a 5th level wizard have", "cleric spells"} {
		resp, err := cl.Search(context.Background(), &lkv1.SearchRequest{Query: q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(resp.GetUnderstood().GetFilters(), func(f *lkv1.UnderstoodFilter) bool { return f.GetField() == "class" }) {
			t.Fatalf("%q: no class understood: %v", q, resp.GetUnderstood())
		}
		found := false
		for _, g := range resp.GetGroups() {
			if g.GetKind() == lkv1.Kind_KIND_CLASS {
				rs := g.GetResults()
				found = len(rs) > 0 && strings.Contains(strings.ToLower(q), strings.ToLower(rs[0].GetEntity().GetName()))
			}
		}
		if !found {
			var kinds []string
			for _, g := range resp.GetGroups() {
				kinds = append(kinds, g.GetKind().Slug())
			}
			t.Errorf("%q: the class it names is not first among the first page's classes (groups %v)", q, kinds)
		}
	}
	// The class first of all where the question asks of the class, the
	// spells first where it asks for spells.
	for _, c := range []struct {
		q    string
		want lkv1.Kind
	}{
		{"what can a 1st level paladin do", lkv1.Kind_KIND_CLASS},
		{"wizard spell slots", lkv1.Kind_KIND_CLASS},
		{"paladin spells", lkv1.Kind_KIND_SPELL},
		{"cleric spells", lkv1.Kind_KIND_SPELL},
	} {
		resp, err := cl.Search(context.Background(), &lkv1.SearchRequest{Query: c.q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if gs := resp.GetGroups(); len(gs) == 0 || gs[0].GetKind() != c.want {
			var kinds []string
			for _, g := range gs {
				kinds = append(kinds, g.GetKind().Slug())
			}
			t.Errorf("%q: groups %v, want %s first", c.q, kinds, c.want.Slug())
		}
	}
}

// TestSearch_featureNamed: a question saying a class feature's name ("how
// does sneak attack work") puts a class or subclass that has it first,
// for every feature of the SRD 5.1 classes that names no entity itself.
func TestSearch_featureNamed(t *testing.T) {
	st := snapshotStore(t)
	svc := query.NewService(st, snap.emb, nil)
	names := map[string]bool{}
	holders := map[string]map[string]bool{} // feature -> keys of what has it
	for _, e := range snap.entities {
		names[strings.ToLower(e.GetName())] = true
		for _, b := range e.GetBlocks() {
			if b.GetType() == "feature" && e.GetCharacterOption() != nil {
				f := strings.ToLower(b.GetName())
				if holders[f] == nil {
					holders[f] = map[string]bool{}
				}
				holders[f][e.GetKey()] = true
			}
		}
	}
	tried, missed := 0, 0
	for _, e := range snap.entities {
		if e.GetKind() != lkv1.Kind_KIND_CLASS || e.GetDocument().GetKey() != "srd-2014" {
			continue
		}
		for _, b := range e.GetBlocks() {
			f := strings.ToLower(b.GetName())
			if b.GetType() != "feature" || names[f] {
				continue
			}
			tried++
			q := "how does " + f + " work"
			resp, err := svc.Search(t.Context(), &lkv1.SearchRequest{Query: q, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			best := bestResult(resp)
			if best == nil || !holders[f][best.GetEntity().GetKey()] {
				missed++
				t.Logf("%q: first %v, not what has the feature (%d entities)", q, best.GetEntity().GetName(), len(holders[f]))
			}
		}
	}
	// Known miss: a name of more than maxNamedWords words ("tongue of the
	// sun and moon"). Names holding a filter's word ("destroy undead": a
	// creature type; "beast spells": the kind) are names.
	if tried < 20 || float64(missed) > 0.02*float64(tried) {
		t.Errorf("%d of %d features' questions put something else first; want at most 2%%", missed, tried)
	}
	t.Logf("%d of %d features' questions put what has the feature first", tried-missed, tried)
}

// TestSearch_nameOverFeature: a name something bears itself names it, not
// the holders of a feature of that name ("how does spellcasting work": the
// Spellcasting rules, not every caster class); a name the question splits
// at its hyphen is still that name ("half-orc": Half-Orc, named).
func TestSearch_nameOverFeature(t *testing.T) {
	cl := client(t)
	for _, c := range []struct{ q, name string }{
		{"how does spellcasting work", "Spellcasting"},
		{"how tall is a half-orc", "Half-Orc"},
	} {
		resp, err := cl.Search(context.Background(), &lkv1.SearchRequest{Query: c.q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		best := bestResult(resp)
		if best == nil || best.GetEntity().GetName() != c.name || best.GetSimilarityScore() < ranking.NearNameScore(0.8)-1e-9 {
			t.Errorf("%q: best %v (%.3f), want %s named", c.q, best.GetEntity().GetName(), best.GetSimilarityScore(), c.name)
		}
		if g := resp.GetGroups(); len(g) > 0 && (g[0].GetKind() == lkv1.Kind_KIND_CLASS || g[0].GetKind() == lkv1.Kind_KIND_SUBCLASS) {
			t.Errorf("%q: %s first", c.q, g[0].GetKind().Slug())
		}
	}
}

// TestSearch_pluralNames: a question naming a creature in the plural
// ("tell me about owlbears") puts a creature of that name first, for every
// one-word creature name of SRD 5.1 whose plural names nothing.
func TestSearch_pluralNames(t *testing.T) {
	st := snapshotStore(t)
	svc := query.NewService(st, snap.emb, nil)
	names := map[string]bool{}
	for _, e := range snap.entities {
		names[strings.ToLower(e.GetName())] = true
	}
	tried, missed := 0, 0
	for _, e := range snap.entities {
		name := strings.ToLower(e.GetName())
		if e.GetKind() != lkv1.Kind_KIND_CREATURE || e.GetDocument().GetKey() != "srd-2014" || strings.ContainsAny(name, " ,-()/") || names[name+"s"] {
			continue
		}
		tried++
		q := "tell me about " + name + "s"
		resp, err := svc.Search(t.Context(), &lkv1.SearchRequest{Query: q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if best := bestResult(resp); best == nil || !strings.EqualFold(best.GetEntity().GetName(), name) {
			missed++
			t.Logf("%q: first %v", q, best.GetEntity().GetName())
		}
	}
	if tried < 20 || float64(missed) > 0.05*float64(tried) {
		t.Errorf("%d of %d plural questions put another entity first; want at most 5%%", missed, tried)
	}
	t.Logf("%d of %d plural questions put the creature first", tried-missed, tried)
}

// TestSearch_howItWorks: a question about how the game works finds the
// rules first, not what its words would filter ("concentration" spells,
// "heavy armor", "melee" weapons) or a text that says them ("work with
// heat ... fire damage").
func TestSearch_howItWorks(t *testing.T) {
	c := client(t)
	for _, tt := range []struct {
		q    string
		want []string // any of them
	}{
		{"how does concentration work", []string{"Duration"}},
		{"how long does it take to don heavy armor", []string{"Getting Into and Out of Armor"}},
		{"rules for ranged attacks in melee", []string{"Ranged Attacks in Close Combat"}},
		{"what happens when a Large creature drops to 0 hit points", []string{"Dropping to 0 Hit Points"}},
		{"can I cast two spells in one turn", []string{"Bonus Action"}},
		// Read as a casting time, it put five bonus-action spells first.
		{"what is a bonus action", []string{"Bonus Action", "Bonus Actions"}},
		// SRD 5.1's Damage Types was fifth; SRD 5.2's glossary put
		// Burning (fire damage each turn) and Breaking Objects above it.
		{"how does fire damage work", []string{"Damage Types", "Burning"}},
	} {
		resp, err := c.Search(t.Context(), &lkv1.SearchRequest{Query: tt.q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		first := resp.GetGroups()[0]
		if k := first.GetKind(); k != lkv1.Kind_KIND_RULE && k != lkv1.Kind_KIND_RULE_SECTION {
			t.Errorf("%q: first group %s %v, want the rules", tt.q, k.Slug(), names(first.GetResults()))
		}
		if got := names(group(resp, lkv1.Kind_KIND_RULE)); !slices.ContainsFunc(got, func(n string) bool { return slices.Contains(tt.want, n) }) {
			t.Errorf("%q: rules %v, want one of %q among them", tt.q, got, tt.want)
		}
	}
}

// TestSearch_wordInText: a word in an entity's text finds it, the prose
// the model does not read (a creature's actions) included: every spell and
// every creature whose text says "petrified" is a result of a keyword
// search for the word, or an alternate of one (a copy of its name).
func TestSearch_wordInText(t *testing.T) {
	c := client(t)
	const word = "petrified"
	says := func(text string) bool {
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if w == word {
				return true
			}
		}
		return false
	}
	for _, k := range []lkv1.Kind{lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_CREATURE} {
		want := map[string]bool{}
		for _, e := range snap.entities {
			text := e.GetDescription() + " " + e.GetHigherLevel()
			for _, b := range e.GetBlocks() {
				text += " " + b.GetText()
			}
			if e.GetKind() == k && says(text) {
				want[e.GetKey()] = true
			}
		}
		if len(want) < 10 {
			t.Fatalf("%d %ss say %q: too few to measure recall", len(want), k.Slug(), word)
		}
		got := keywordHits(t, c, word, k)
		for key := range want {
			if !got[key] {
				t.Errorf("%s says %q and is not found by a keyword search for it", key, word)
			}
		}
		t.Logf("%ss saying %q: %d, found %d", k.Slug(), word, len(want), len(want)-countMissing(want, got))
	}
}

// keywordHits are the keys of every entity of kind a keyword search for
// q finds, page after page, with the copies each result stands for.
func keywordHits(t *testing.T, c lkv1.QueryServiceClient, q string, kind lkv1.Kind) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	cursor := ""
	for page := 0; page < 20; page++ {
		resp, err := c.Search(t.Context(), &lkv1.SearchRequest{Query: q, Semantic: proto.Bool(false), Kinds: []lkv1.Kind{kind}, Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range resp.GetGroups() {
			for _, r := range g.GetResults() {
				got[r.GetEntity().GetKey()] = true
				for _, a := range r.GetAlternates() {
					got[a.GetKey()] = true
				}
			}
		}
		if cursor = resp.GetNextCursor(); cursor == "" {
			break
		}
	}
	return got
}

func countMissing(want, got map[string]bool) int {
	n := 0
	for k := range want {
		if !got[k] {
			n++
		}
	}
	return n
}

// TestSearch_homebrewCopy: a homebrew copy of an official name (the
// commonest homebrew) is the result when the question reaches its text or
// names its book; otherwise the SRD's copy answers, listing it.
func TestSearch_homebrewCopy(t *testing.T) {
	ctx := context.Background()
	snapshotStore(t)
	st, _ := srdSpellStore(t, nil)
	svc := query.NewService(st, snap.emb, nil)
	var fb *lkv1.Entity
	for _, e := range snap.entities {
		if e.GetKey() == "open5e_v2:srd-2014:spell:fireball" {
			fb = proto.Clone(e).(*lkv1.Entity)
		}
	}
	if fb == nil {
		t.Fatal("no SRD Fireball in the snapshot")
	}
	vec, _, err := snap.store.CachedVector(ctx, snap.store.Model().Name, fb.GetContentHash())
	if err != nil {
		t.Fatal(err)
	}
	fb.Document = &lkv1.Document{Key: "kitchen-brew", Name: "Kitchen Brew", Source: lkv1.Source_SOURCE_ORCBREW}
	fb.Key = lkv1.EntityKey(lkv1.Source_SOURCE_ORCBREW, "kitchen-brew", lkv1.Kind_KIND_SPELL, "fireball")
	fb.Description = "A bright streak of lavender flame flashes from your pointing finger. " + fb.GetDescription()
	fb.ContentHash = "kitchen-brew-fireball"
	if err := st.Apply(ctx, []badgerstore.Write{{Entity: fb, Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query, want string
		semantic    bool
	}{
		{"lavender", fb.GetKey(), false},
		{"lavender", fb.GetKey(), true},
		{"kitchen brew fireball", fb.GetKey(), true},
		{"fireball", "open5e_v2:srd-2014:spell:fireball", true},
	} {
		resp, err := svc.Search(ctx, &lkv1.SearchRequest{Query: c.query, Semantic: proto.Bool(c.semantic), Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		var first *lkv1.Result
		for _, r := range group(resp, lkv1.Kind_KIND_SPELL) {
			if r.GetEntity().GetName() == "Fireball" {
				first = r
				break
			}
		}
		if first == nil {
			t.Errorf("search %q (semantic %v): no Fireball", c.query, c.semantic)
			continue
		}
		if got := first.GetEntity().GetKey(); got != c.want {
			t.Errorf("search %q (semantic %v): Fireball is %s, want %s", c.query, c.semantic, got, c.want)
		}
		if len(first.GetAlternates()) == 0 {
			t.Errorf("search %q: Fireball lists no other copy", c.query)
		}
	}
}

// TestLookup_facetQuestionKeepsAuthority: a question read as facets ("put
// enemies to sleep": condition inflicted) is answered by the most
// authoritative copy of each name that does it, not by the copy whose text
// happens to say the question's words, and that copy ranks with the SRD's
// prior.
func TestLookup_facetQuestionKeepsAuthority(t *testing.T) {
	c := client(t)
	resp, err := c.LookupSpells(context.Background(), &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "put enemies to sleep", Limit: 5}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resp.GetResults() {
		e := r.GetEntity()
		names = append(names, e.GetName()+" ("+e.GetDocument().GetKey()+")")
		if e.GetName() == "Sleep" && !strings.HasPrefix(e.GetDocument().GetKey(), "srd-") {
			t.Errorf("Sleep is %s's copy, want an SRD's", e.GetDocument().GetKey())
		}
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "Sleep (") }) {
		t.Errorf("put enemies to sleep: %q, want Sleep among the five", names)
	}
}

// TestLookup_wings: wings are a creature's fly speed, and the word is no
// term: "a horse with wings" gives fliers, Pegasus among them, not the
// dragons whose Wing Attack says "wing".
func TestLookup_wings(t *testing.T) {
	c := client(t)
	resp, err := c.LookupCreatures(t.Context(), &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{SemanticQuery: "a horse with wings", Limit: 5}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resp.GetResults() {
		e := r.GetEntity()
		names = append(names, e.GetName())
		if e.GetCreature().GetSpeed()["fly"] == 0 {
			t.Errorf("%s (%s) cannot fly", e.GetName(), e.GetDocument().GetKey())
		}
	}
	if !slices.Contains(names, "Pegasus") {
		t.Errorf("a horse with wings: %q, want Pegasus among the five", names)
	}
}

// TestSearch_noSuchName: a question that reads as a name and names nothing
// says so before the nearest names, which would otherwise pass for its
// match; a name, its plural or a known alias says nothing of the kind.
func TestSearch_noSuchName(t *testing.T) {
	c := client(t)
	for _, tc := range []struct {
		q    string
		says bool
	}{
		{"land shark", true},
		{"firbal", true},
		{"fireball", false},
		{"owlbears", false},
		{"bigbys hand", false},
		{"fire damage", false},
	} {
		resp, err := c.Search(context.Background(), &lkv1.SearchRequest{Query: tc.q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		w := resp.GetWarnings()
		said := len(w) > 0 && strings.HasPrefix(w[0], "No entity is named")
		if said != tc.says {
			t.Errorf("search %q: warnings %q; want a first warning that no entity has the name: %v", tc.q, w, tc.says)
		}
		if said && len(resp.GetGroups()) == 0 {
			t.Errorf("search %q: no nearest content after the warning", tc.q)
		}
	}
}

// TestSearch_madeFrom: a magic weapon is found by the weapon it is made
// from, though its text may only say "this magic weapon" (SRD 5.1's
// Dwarven Thrower is a warhammer): the base its book names is in its text.
func TestSearch_madeFrom(t *testing.T) {
	c := client(t)
	for _, base := range []string{"warhammer", "longbow"} {
		want, unsaid := map[string]bool{}, 0
		for _, e := range snap.entities {
			if e.GetKind() == lkv1.Kind_KIND_MAGIC_ITEM && e.GetItem().GetBase() == base {
				want[e.GetKey()] = true
				if !strings.Contains(strings.ToLower(e.GetName()+" "+e.GetDescription()), base) {
					unsaid++
				}
			}
		}
		if unsaid == 0 {
			t.Fatalf("every magic item made from a %s says so: the test checks nothing", base)
		}
		got := keywordHits(t, c, base, lkv1.Kind_KIND_MAGIC_ITEM)
		for key := range want {
			if !got[key] {
				t.Errorf("%s is made from a %s and is not found by a keyword search for it", key, base)
			}
		}
		t.Logf("%d magic items made from a %s (%d whose name and text do not say it), %d found", len(want), base, unsaid, len(want)-countMissing(want, got))
	}
}

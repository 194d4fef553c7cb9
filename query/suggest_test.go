package query_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/badgerstore"
	rel "lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// suggestedNames lists the distinct names suggested, best first, and the
// documents of each.
func suggestedNames(resp *lkv1.LookupResponse) ([]string, map[string][]string) {
	var order []string
	docs := map[string][]string{}
	for _, s := range resp.GetSuggestions() {
		if _, ok := docs[s.GetName()]; !ok {
			order = append(order, s.GetName())
		}
		docs[s.GetName()] = append(docs[s.GetName()], s.GetDocumentKey())
	}
	return order, docs
}

// Did-you-mean: a name that matches nothing gets the closest names as
// suggestions, never as results.
func TestLookup_Suggestions(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		docs       []string // documents the first suggestion must come from
	}{
		{"firebal", "Fireball", []string{"srd-2014", "srd-2024", "a5e-ag"}},
		{"magic missle", "Magic Missile", []string{"srd-2014", "srd-2024"}},
		{"cury wounds", "Cure Wounds", []string{"srd-2014", "srd-2024"}},
		{"Fierball", "Fireball", nil},
		{"Tasha's Hideus Laughter", "Hideous Laughter", []string{"srd-2014"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common(tc.name, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetResults()) != 0 || resp.GetNameMatch() != "" {
				t.Errorf("results %v (match %q), want none: a suggestion is never substituted", names(resp.GetResults()), resp.GetNameMatch())
			}
			order, docs := suggestedNames(resp)
			t.Logf("%s -> %v %v", tc.name, order, docs)
			if len(order) == 0 || order[0] != tc.want {
				t.Fatalf("suggestions %v, want %s first", order, tc.want)
			}
			for _, d := range tc.docs {
				if !slices.Contains(docs[tc.want], d) {
					t.Errorf("%s suggested from %v, want %s among them", tc.want, docs[tc.want], d)
				}
			}
			for _, s := range resp.GetSuggestions() {
				if s.GetScore() <= 0 || s.GetScore() > 1 || s.GetKey() == "" || s.GetUri() == "" || s.GetVia() == "" {
					t.Errorf("suggestion %v: want a score in (0, 1], a key, a URI and how it was found", s)
				}
			}
		})
	}
	t.Run("nothing near", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("qqqqzzzzxxxx", 0)})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetSuggestions()) != 0 {
			t.Errorf("suggestions %v for a name like nothing", resp.GetSuggestions())
		}
	})
}

// An exact match is answered as before: no alias, no suggestion crowds it.
func TestLookup_NoSubstitutionOnExactMatch(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, want string }{
		{"Fireball", "Fireball"},
		{"Feeblemind", "Feeblemind"}, // renamed Befuddlement in SRD 5.2: both exist
		{"Acid Arrow", "Acid Arrow"},
	} {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common(tc.name, 0)})
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.GetResults())
		if len(got) == 0 || resp.GetNameMatch() != "exact" || len(resp.GetSuggestions()) != 0 || resp.GetMatchedAlias() != "" {
			t.Fatalf("%s: results %v, match %q, alias %q, suggestions %d; want exact matches only", tc.name, got, resp.GetNameMatch(), resp.GetMatchedAlias(), len(resp.GetSuggestions()))
		}
		for _, n := range got {
			if n != tc.want {
				t.Errorf("%s: result %q, want only %q", tc.name, n, tc.want)
			}
		}
	}
}

// Names players know from the books find the open content's entity.
func TestLookup_Aliases(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		docs []string
		want string
	}{
		{"Tasha's Hideous Laughter", nil, "Hideous Laughter"},
		{"Melfs acid arrow", nil, "Acid Arrow"},
		{"melf's acid arrow", nil, "Acid Arrow"},
		{"bigby hand", nil, "Arcane Hand"},
		{"Bigby's Hand", []string{"srd-2024"}, "Arcane Hand"},
		{"Leomunds Tiny Hut", nil, "Tiny Hut"},
		{"Feeblemind", []string{"srd-2024"}, "Befuddlement"},
		{"Befuddlement", []string{"srd-2014"}, "Feeblemind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			com := common(tc.name, 0)
			if tc.docs != nil {
				com.Documents = docs(tc.docs...)
			}
			resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: com})
			if err != nil {
				t.Fatal(err)
			}
			got := names(resp.GetResults())
			if len(got) == 0 || resp.GetNameMatch() != "alias" || resp.GetMatchedAlias() == "" {
				t.Fatalf("results %v, match %q, alias %q; want %s through an alias", got, resp.GetNameMatch(), resp.GetMatchedAlias(), tc.want)
			}
			for _, r := range resp.GetResults() {
				if r.GetEntity().GetName() != tc.want {
					t.Errorf("result %q, want only %q", r.GetEntity().GetName(), tc.want)
				}
				if tc.docs != nil && !slices.Contains(tc.docs, r.GetEntity().GetDocument().GetKey()) {
					t.Errorf("result from %s, want only %v", r.GetEntity().GetDocument().GetKey(), tc.docs)
				}
			}
		})
	}
	// The creature renamed in SRD 5.2, through lookup_creature.
	resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "giant poisonous snake", Documents: docs("srd-2024")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(resp.GetResults()); !slices.Equal(got, []string{"Giant Venomous Snake"}) {
		t.Errorf("giant poisonous snake in srd-2024: %v, want Giant Venomous Snake", got)
	}
}

// Suggestions come only from entities that pass every other filter.
func TestLookup_SuggestionsRespectFilters(t *testing.T) {
	snapshotStore(t)
	byKey := map[string]*lkv1.Entity{}
	for _, e := range snap.entities {
		byKey[e.GetKey()] = e
	}
	c := client(t)
	ctx := context.Background()
	check := func(t *testing.T, resp *lkv1.LookupResponse, want string, pass func(*lkv1.Entity) bool) {
		t.Helper()
		order, _ := suggestedNames(resp)
		if !slices.Contains(order, want) {
			t.Errorf("suggestions %v, want %s (it passes the filters)", order, want)
		}
		for _, s := range resp.GetSuggestions() {
			if e := byKey[s.GetKey()]; e == nil || !pass(e) {
				t.Errorf("suggestion %s (%s) does not pass the filters", s.GetName(), s.GetKey())
			}
		}
	}
	t.Run("documents", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "firebal", Documents: docs("srd-2024")}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, "Fireball", func(e *lkv1.Entity) bool { return e.GetDocument().GetKey() == "srd-2024" })
	})
	t.Run("level", func(t *testing.T) {
		// Fire Bolt (a cantrip) is near "firebal" too, but only level 3
		// may be suggested; and the other way round for cantrips.
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("firebal", 0), Levels: []int32{3}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, "Fireball", func(e *lkv1.Entity) bool { return e.GetSpell().GetLevel() == 3 })
		resp, err = c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("fire bolz", 0), Levels: []int32{0}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, "Fire Bolt", func(e *lkv1.Entity) bool { return e.GetSpell().GetLevel() == 0 })
	})
	t.Run("type", func(t *testing.T) {
		resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "hobgoblen", Documents: docs("srd-2014")}, Types: []string{"humanoid"}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, "Hobgoblin", func(e *lkv1.Entity) bool {
			return e.GetKind() == lkv1.Kind_KIND_CREATURE && strings.EqualFold(e.GetCreature().GetType(), "humanoid") && e.GetDocument().GetKey() == "srd-2014"
		})
	})
	t.Run("kind", func(t *testing.T) {
		// A creature named nearly so is not a spell.
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("hobgoblen", 0)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range resp.GetSuggestions() {
			if e := byKey[s.GetKey()]; e == nil || e.GetKind() != lkv1.Kind_KIND_SPELL {
				t.Errorf("lookup_spell suggested %s (%s)", s.GetName(), s.GetKey())
			}
		}
	})
}

// Well-known names outside open content are said to be so, with the
// nearest open content.
func TestLookup_NotOpenContent(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, name := range []string{"beholder", "Mind Flayer", "displacer beast", "beholdr"} {
		resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common(name, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResults()) != 0 || resp.GetNotOpenContent() == "" {
			t.Errorf("%s: results %v, not_open_content %q; want none and the name", name, names(resp.GetResults()), resp.GetNotOpenContent())
		}
		meaning := 0
		order, _ := suggestedNames(resp)
		t.Logf("%s -> %s: %v", name, resp.GetNotOpenContent(), order)
		for _, s := range resp.GetSuggestions() {
			if s.GetVia() == "meaning" {
				meaning++
			}
		}
		if meaning == 0 {
			t.Errorf("%s: no open content offered by meaning: %v", name, resp.GetSuggestions())
		}
	}
	// A name that is open content is not flagged.
	resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("goblin", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetNotOpenContent() != "" || len(resp.GetResults()) == 0 {
		t.Errorf("goblin: not_open_content %q, %d results", resp.GetNotOpenContent(), len(resp.GetResults()))
	}
}

// Search says so too, and still ranks the nearest open content.
func TestSearch_NotOpenContent(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	// The name alone, or a question that mostly is it.
	for _, tc := range []struct{ q, want string }{
		{"beholder", "Beholder"},
		{"describe a beholder", "Beholder"},
		{"how do mind flayers fight", "Mind Flayer"},
	} {
		resp, err := c.Search(ctx, &lkv1.SearchRequest{Query: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetNotOpenContent() != tc.want {
			t.Errorf("search %q: not_open_content %q, want %s", tc.q, resp.GetNotOpenContent(), tc.want)
		}
	}
	// Not when the name is a small part of the question, or absent.
	for _, q := range []string{"goblin", "fire damage", "a monster with many eyes like a beholder that shoots rays from eyestalks"} {
		resp, err := c.Search(ctx, &lkv1.SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetNotOpenContent() != "" || len(resp.GetGroups()) == 0 {
			t.Errorf("search %s: not_open_content %q, %d groups", q, resp.GetNotOpenContent(), len(resp.GetGroups()))
		}
	}
}

// Search finds an entity by the name the books give it.
func TestSearch_Aliases(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, tc := range []struct{ q, want string }{
		{"bigbys hand", "Arcane Hand"},
		{"Melf's Acid Arrow", "Acid Arrow"},
		{"tashas hideous laughter", "Hideous Laughter"},
		{"aoo", "Opportunity Attacks"},
		{"hp", "Hit Points"},
		{"AC", "Armor Class"},
	} {
		for _, semantic := range []bool{true, false} {
			resp, err := c.Search(ctx, &lkv1.SearchRequest{Query: tc.q, Semantic: &semantic})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetGroups()) == 0 || len(resp.GetGroups()[0].GetResults()) == 0 ||
				resp.GetGroups()[0].GetResults()[0].GetEntity().GetName() != tc.want {
				var first []string
				for _, g := range resp.GetGroups() {
					first = append(first, g.GetKind().Slug()+": "+strings.Join(names(g.GetResults()[:min(2, len(g.GetResults()))]), ", "))
				}
				t.Errorf("search %q (semantic %v): %v, want %s first", tc.q, semantic, first, tc.want)
			}
		}
	}
}

// Every alias target is in the bundled snapshot, with the alias's kind;
// every not-open name is in no document.
func TestAliasTable_TargetsExist(t *testing.T) {
	snapshotStore(t)
	es := snap.entities
	have := map[string]bool{}
	for _, e := range es {
		have[e.GetKind().Slug()+"/"+strings.ToLower(e.GetName())] = true
		have["any/"+rel.NormalizeName(e.GetName())] = true
	}
	rows := rel.Aliases().Rows()
	if len(rows) < 40 {
		t.Fatalf("%d alias rows, want the whole table", len(rows))
	}
	for _, a := range rows {
		switch a.Type {
		case rel.AliasNotOpen:
			if have["any/"+rel.NormalizeName(a.Known)] {
				t.Errorf("not-open %q is in the snapshot", a.Known)
			}
		case rel.AliasWizard, rel.AliasRenamed, rel.AliasShort:
			if !have[a.Kind.Slug()+"/"+strings.ToLower(a.Name)] {
				t.Errorf("%s alias %q -> %s %q: no such entity in the snapshot", a.Type, a.Known, a.Kind.Slug(), a.Name)
			}
		}
	}
}

// FuzzLookupName: whatever the name, a lookup answers without error (or
// with InvalidArgument for input out of its limits), never offers
// suggestions next to results, matches names as it says it did, and
// suggests only spells.
func FuzzLookupName(f *testing.F) {
	for _, s := range []string{"firebal", "Fireball", "fire*", "%", "*", "Tasha's Hideous Laughter", "melf acid arrow",
		"beholder", "’’’", "  ", "srd_fireball", "open5e_v2:srd-2014:spell:fireball", "ancient-red-dragon", "a\x00b"} {
		f.Add(s)
	}
	c := client(f)
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) {
			return // a proto string cannot carry it: the client refuses to send it
		}
		resp, err := c.LookupSpells(context.Background(), &lkv1.LookupSpellsRequest{Common: common(name, 5)})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("LookupSpells(%q): %v", name, err)
			}
			return
		}
		if len(resp.GetResults()) > 0 && len(resp.GetSuggestions()) > 0 {
			t.Fatalf("LookupSpells(%q): %d results and %d suggestions", name, len(resp.GetResults()), len(resp.GetSuggestions()))
		}
		for _, r := range resp.GetResults() {
			if r.GetEntity().GetKind() != lkv1.Kind_KIND_SPELL {
				t.Fatalf("LookupSpells(%q) returned %s", name, r.GetEntity().GetKey())
			}
			if resp.GetNameMatch() == "exact" && !strings.EqualFold(r.GetEntity().GetName(), strings.TrimSpace(name)) {
				t.Fatalf("LookupSpells(%q): exact match %q", name, r.GetEntity().GetName())
			}
		}
		if resp.GetNameMatch() == "alias" && resp.GetMatchedAlias() == "" {
			t.Fatalf("LookupSpells(%q): alias match without the alias", name)
		}
		for _, s := range resp.GetSuggestions() {
			if !strings.Contains(s.GetKey(), ":spell:") || s.GetScore() <= 0 || s.GetScore() > 1 {
				t.Fatalf("LookupSpells(%q): suggestion %v", name, s)
			}
		}
	})
}

// nameContains (through name trigrams) agrees with a scan of every name
// for the query as whole words: pieces of real names (inside words and
// across them), misspellings and text no name has.
func TestNameContains(t *testing.T) {
	st := snapshotStore(t)
	err := st.View(context.Background(), func(v *badgerstore.View) error {
		var names []string
		v.Names(func(n string) bool { names = append(names, n); return true })
		slices.Sort(names)
		scan := func(q string) bool {
			re := regexp.MustCompile(`(^|[^\pL\pN])` + regexp.QuoteMeta(q) + `([^\pL\pN]|$)`)
			for _, n := range names {
				// The regexp needs q itself in n: asking only those keeps
				// the scan seconds long under the race detector, not minutes.
				if strings.Contains(n, q) && re.MatchString(n) {
					return true
				}
			}
			return false
		}
		qs := []string{"dragon", "agon", "red dr", "ire bo", "xqzv", "fireblal", "é", "ab", "of the", "ll", "bag of holdin", "red dragon"}
		for i := 0; i < len(names); i += 37 {
			r := []rune(names[i])
			for _, span := range [][2]int{{0, 4}, {1, 6}, {2, 9}, {len(r) - 4, len(r)}} {
				if span[0] >= 0 && span[1] <= len(r) && span[0] < span[1] {
					qs = append(qs, string(r[span[0]:span[1]]))
				}
			}
			qs = append(qs, string(r)+"x", "x"+string(r))
			// Whole words of it: the name, its first and last words.
			if ws := strings.Fields(names[i]); len(ws) > 0 {
				qs = append(qs, names[i], ws[0], ws[len(ws)-1])
			}
		}
		found := 0
		for _, q := range qs {
			want := scan(q)
			if got := query.NameContains(v, q); got != want {
				t.Errorf("nameContains(%q) = %v, a scan of every name says %v", q, got, want)
			}
			if want {
				found++
			}
		}
		if found < len(qs)/4 || found > 3*len(qs)/4 {
			t.Errorf("%d of %d probes are in some name: the test checks little of one side", found, len(qs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The names sharing trigrams with a query (the candidates of every typo
// match) are those a scan of every name finds with the same Dice rule:
// typos, multi-word questions, names themselves and text no name has.
func TestNamesSharingTrigrams(t *testing.T) {
	st := snapshotStore(t)
	err := st.View(context.Background(), func(v *badgerstore.View) error {
		var names []string
		v.Names(func(n string) bool { names = append(names, n); return true })
		scan := func(q string, minDice float64) []string {
			qt := rel.Trigrams(q)
			var out []string
			for _, n := range names {
				c := 0
				for _, g := range rel.Trigrams(n) {
					if slices.Contains(qt, g) {
						c++
					}
				}
				if c >= 2 && 2*float64(c)/float64(len(qt)+utf8.RuneCountInString(n)) >= minDice {
					out = append(out, n)
				}
			}
			slices.Sort(out)
			return out
		}
		qs := []string{"firebal", "fire breathing monster", "ancient red dragn", "stop enemies from moving",
			"magic missle", "xqzv", "élan", "a", "wall of fire and ice storms", names[0], names[len(names)/2]}
		found := 0
		for _, q := range qs {
			for _, minDice := range []float64{0.25, 0.35, 0.6} {
				want := scan(q, minDice)
				if got := rel.NamesSharingTrigrams(v, q, minDice); !slices.Equal(got, want) {
					t.Errorf("NamesSharingTrigrams(%q, %v) = %d names %v, a scan finds %d: %v", q, minDice, len(got), got, len(want), want)
				}
				found += len(want)
			}
		}
		if found < 20 {
			t.Errorf("the probes share trigrams with only %d names: the test checks little", found)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

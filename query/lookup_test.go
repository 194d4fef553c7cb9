package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	rel "lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

func names(rs []*lkv1.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.GetEntity().GetName()
	}
	return out
}

func docKeys(rs []*lkv1.Result) []string {
	var out []string
	for _, r := range rs {
		if k := r.GetEntity().GetDocument().GetKey(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func common(name string, limit uint32) *lkv1.Common { return &lkv1.Common{Name: name, Limit: limit} }

func docs(d ...string) *lkv1.DocumentFilter { return &lkv1.DocumentFilter{Documents: d} }

// Name matching: enhanced-search.md and mcp-tools.md scenarios.
func TestLookup_NameMatching(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	spells := func(name string, limit uint32) (*lkv1.LookupResponse, error) {
		return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common(name, limit)})
	}
	// Fullwidth letters and a ligature are the same name under NFKC
	// (issue 49, row 14).
	for _, in := range []string{"fireball", "FIREBALL", "Fireball", "  fIrEbAlL ", "Ｆｉｒｅｂａｌｌ", "ﬁreball"} {
		t.Run("case-insensitive exact "+in, func(t *testing.T) {
			resp, err := spells(in, 0)
			if err != nil {
				t.Fatal(err)
			}
			// One result, the SRD 5.1's, and every other book's Fireball
			// as its alternates (many books, one name).
			got := names(resp.GetResults())
			if len(got) != 1 || got[0] != "Fireball" || resp.GetNameMatch() != "exact" {
				t.Fatalf("names = %v, match %q; want one Fireball, exact", got, resp.GetNameMatch())
			}
			r := resp.GetResults()[0]
			if d := r.GetEntity().GetDocument().GetKey(); d != "srd-2014" {
				t.Errorf("first Fireball from %s, want the SRD 5.1's", d)
			}
			var alts []string
			for _, a := range r.GetAlternates() {
				alts = append(alts, a.GetDocumentKey())
			}
			want := 0
			for _, e := range snap.entities {
				if e.GetKind() == lkv1.Kind_KIND_SPELL && e.GetName() == "Fireball" && e.GetDocument().GetKey() != "srd-2014" {
					want++
				}
			}
			if !slices.Contains(alts, "srd-2024") || len(alts) != want {
				t.Errorf("alternates from %v, want the %d other Fireballs, srd-2024 among them", alts, want)
			}
			if resp.GetRanking() != lkv1.Ranking_RANKING_STRUCTURED || resp.GetResults()[0].SimilarityScore != nil {
				t.Errorf("structured lookup: ranking %v, score %v; want STRUCTURED and no score", resp.GetRanking(), resp.GetResults()[0].SimilarityScore)
			}
		})
	}
	t.Run("creature any case", func(t *testing.T) {
		resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("ancient RED dragon", 0)})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(resp.GetResults()); len(got) == 0 || got[0] != "Ancient Red Dragon" {
			t.Errorf("names = %v, want Ancient Red Dragon", got)
		}
	})

	wild := []struct {
		pattern string
		ok      func(string) bool
	}{
		{"fire*", func(n string) bool { return strings.HasPrefix(n, "fire") }},
		{"%fire", func(n string) bool { return strings.HasSuffix(n, "fire") }},
		{"*fire*", func(n string) bool { return strings.Contains(n, "fire") }},
		{"%FIRE%", func(n string) bool { return strings.Contains(n, "fire") }},
		{"f*ball", func(n string) bool { return strings.HasPrefix(n, "f") && strings.HasSuffix(n, "ball") }},
		{"wall*fire", func(n string) bool { return strings.HasPrefix(n, "wall") && strings.HasSuffix(n, "fire") }},
	}
	for _, w := range wild {
		t.Run("wildcard "+w.pattern, func(t *testing.T) {
			resp, err := spells(w.pattern, 100)
			if err != nil {
				t.Fatal(err)
			}
			got := names(resp.GetResults())
			if len(got) == 0 || resp.GetNameMatch() != "pattern" {
				t.Fatalf("names = %v, match %q; want matches by pattern", got, resp.GetNameMatch())
			}
			for _, n := range got {
				if !w.ok(strings.ToLower(n)) {
					t.Errorf("%q does not match %q", n, w.pattern)
				}
			}
		})
	}
	t.Run("wildcard names from the spec", func(t *testing.T) {
		resp, err := spells("*fire*", 100)
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.GetResults())
		for _, want := range []string{"Fireball", "Fire Bolt", "Wall of Fire"} {
			if !slices.Contains(got, want) {
				t.Errorf("*fire* = %v, want %q among them", got, want)
			}
		}
	})
	t.Run("wildcard respects limit", func(t *testing.T) {
		resp, err := c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: common("*sword*", 5)})
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.GetResults())
		if len(got) != 5 {
			t.Fatalf("*sword* limit 5 = %v, want exactly 5", got)
		}
		for _, n := range got {
			if !strings.Contains(strings.ToLower(n), "sword") {
				t.Errorf("%q does not contain sword", n)
			}
		}
	})

	literal := []string{
		"xyz123*",
		"fire_ball", // "_" is literal, not a one-character wildcard
		"Robert'; DROP TABLE spells; --",
		"%; DROP TABLE creatures; --",
		"fireball' OR '1'='1",
		"fire\\%",
		"\"fireball\"",
	}
	for _, in := range literal {
		t.Run("literal "+in, func(t *testing.T) {
			for _, call := range []func() (*lkv1.LookupResponse, error){
				func() (*lkv1.LookupResponse, error) { return spells(in, 0) },
				func() (*lkv1.LookupResponse, error) {
					return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common(in, 0)})
				},
			} {
				resp, err := call()
				if err != nil {
					t.Fatalf("error %v; want an empty result", err)
				}
				if len(resp.GetResults()) != 0 {
					t.Errorf("results %v; want none", names(resp.GetResults()))
				}
			}
		})
	}

	fallback := []struct {
		name, in, want, match string
		call                  func(string) (*lkv1.LookupResponse, error)
	}{
		{"creature slug", "ancient-red-dragon", "Ancient Red Dragon", "slug", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common(n, 0)})
		}},
		{"magic item slug", "wand-of-magic-missiles", "Wand of Magic Missiles", "slug", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: common(n, 0), Kinds: []lkv1.Kind{lkv1.Kind_KIND_MAGIC_ITEM}})
		}},
		{"source key", "srd_fireball", "Fireball", "key", func(n string) (*lkv1.LookupResponse, error) { return spells(n, 0) }},
		{"entity key", "open5e_v2:srd-2014:spell:fireball", "Fireball", "key", func(n string) (*lkv1.LookupResponse, error) { return spells(n, 0) }},
		{"condition", "grappled", "Grappled", "exact", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: common(n, 0), Kinds: []lkv1.Kind{lkv1.Kind_KIND_CONDITION}})
		}},
		{"feat", "grappler", "Grappler", "exact", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: common(n, 0), Kinds: []lkv1.Kind{lkv1.Kind_KIND_FEAT}})
		}},
		{"class", "paladin", "Paladin", "exact", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: common(n, 0), Kinds: []lkv1.Kind{lkv1.Kind_KIND_CLASS}})
		}},
		// The same words but for their endings: the singular of a plural
		// name, the plural of a singular one.
		{"rule singular", "opportunity attack", "Opportunity Attacks", "inflection", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: common(n, 0)})
		}},
		{"creature plural", "giant spiders", "Giant Spider", "inflection", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common(n, 0)})
		}},
		{"magic item plural", "rings of protection", "Ring of Protection", "inflection", func(n string) (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: common(n, 0)})
		}},
		{"spell plural", "Fireballs", "Fireball", "inflection", func(n string) (*lkv1.LookupResponse, error) { return spells(n, 0) }},
	}
	for _, f := range fallback {
		t.Run("fallback "+f.name, func(t *testing.T) {
			resp, err := f.call(f.in)
			if err != nil {
				t.Fatal(err)
			}
			got := names(resp.GetResults())
			if len(got) == 0 || got[0] != f.want || resp.GetNameMatch() != f.match {
				t.Errorf("%q = %v (match %q), want %q (match %q)", f.in, got, resp.GetNameMatch(), f.want, f.match)
			}
		})
	}
}

func TestLookup_InvalidInput(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	long := strings.Repeat("a", 201)
	tests := []struct {
		name, field string
		call        func() error
	}{
		{"long name", "name", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common(long, 0)})
			return err
		}},
		{"limit too high", "limit", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("", 1000)})
			return err
		}},
		{"huge semantic query", "semantic_query", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: strings.Repeat("x ", 5000)}})
			return err
		}},
		{"level out of range", "levels", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Levels: []int32{12}})
			return err
		}},
		{"inverted range", "cr_range", func() error {
			_, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{CrRange: &lkv1.DoubleRange{Min: proto.Float64(5), Max: proto.Float64(1)}})
			return err
		}},
		{"kind of another tool", "kinds", func() error {
			_, err := c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL}})
			return err
		}},
		{"unknown ability", "abilities", func() error {
			_, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Abilities: []*lkv1.AbilityFilter{{Ability: "luck"}}})
			return err
		}},
		{"empty search", "query", func() error {
			_, err := c.Search(ctx, &lkv1.SearchRequest{Query: "  "})
			return err
		}},
		{"empty key", "key", func() error {
			_, err := c.GetEntity(ctx, &lkv1.GetEntityRequest{})
			return err
		}},
		{"too many documents", "documents", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Documents: docs(make([]string, 101)...)}})
			return err
		}},
	}
	// Invalid UTF-8 cannot cross gRPC (proto3 strings); the service
	// itself rejects it for in-process callers.
	svc := query.NewService(snapshotStore(t), nil, nil)
	tests = append(tests, struct {
		name, field string
		call        func() error
	}{"invalid utf-8", "name", func() error {
		_, err := svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("\xff\xfe", 0)})
		return query.ToStatus(err)
	}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("err = %v, want InvalidArgument", err)
			}
			if !strings.Contains(status.Convert(err).Message(), tt.field) {
				t.Errorf("message %q does not name the field %q", status.Convert(err).Message(), tt.field)
			}
		})
	}
}

// distinctNames counts the snapshot's names of a kind: a lookup without a
// documents filter folds a name's copies into one result.
func distinctNames(k lkv1.Kind) int {
	seen := map[string]bool{}
	for _, e := range snap.entities {
		if e.GetKind() == k {
			seen[strings.ToLower(e.GetName())] = true
		}
	}
	return len(seen)
}

// limit is exact, and a query reads only the entities it returns.
func TestLookup_LimitExact(t *testing.T) {
	st := snapshotStore(t)
	c := client(t)
	ctx := context.Background()
	tests := []struct {
		name string
		want int
		call func() (*lkv1.LookupResponse, error)
	}{
		{"creatures limit 20", 20, func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("", 20)})
		}},
		{"default limit", 20, func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{})
		}},
		{"weapons limit 15", 15, func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: common("", 15), Kinds: []lkv1.Kind{lkv1.Kind_KIND_WEAPON}})
		}},
		{"classes limit 20", min(20, distinctNames(lkv1.Kind_KIND_CLASS)), func() (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: common("", 20), Kinds: []lkv1.Kind{lkv1.Kind_KIND_CLASS}})
		}},
		{"elves limit 5", 5, func() (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: common("*elf*", 5), Kinds: []lkv1.Kind{lkv1.Kind_KIND_RACE, lkv1.Kind_KIND_SUBRACE}})
		}},
		{"dragons cr 10 limit 20", -1, func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("*dragon*", 20), Cr: proto.Float64(10)})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := st.Stats().EntityReads
			resp, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			n := len(resp.GetResults())
			if tt.want >= 0 && n != tt.want {
				t.Errorf("%d results, want exactly %d", n, tt.want)
			}
			if tt.want < 0 && (n == 0 || n > 20) {
				t.Errorf("%d results, want 1-20", n)
			}
			// Other tests may run in parallel on other stores only; this
			// store is read by this test alone at this moment.
			if reads := st.Stats().EntityReads - before; reads != uint64(n) {
				t.Errorf("read %d entities to return %d", reads, n)
			}
		})
	}
}

// Many books, one name: without a documents filter a name lookup gives the
// SRD 5.1's stat block (else the SRD 5.2's, else the first book's) with
// the other books' copies as alternates; a walk of pages returns every
// matching entity once, as a result or an alternate; a documents filter
// gives each book's own.
func TestLookup_ManyBooksOneName(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	resp, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("goblin", 0)})
	if err != nil {
		t.Fatal(err)
	}
	var books []string
	for _, e := range snap.entities {
		if e.GetKind() == lkv1.Kind_KIND_CREATURE && strings.EqualFold(e.GetName(), "goblin") {
			books = append(books, e.GetDocument().GetKey())
		}
	}
	if len(books) < 3 {
		t.Fatalf("the snapshot has goblins from %v; the case needs several books", books)
	}
	if n := len(resp.GetResults()); n != 1 || resp.GetResults()[0].GetEntity().GetDocument().GetKey() != "srd-2014" {
		t.Fatalf("%d results (%v), want the SRD 5.1 goblin alone", n, docKeys(resp.GetResults()))
	}
	if alts := resp.GetResults()[0].GetAlternates(); len(alts) != len(books)-1 {
		t.Errorf("%d alternates, want the other %d books' goblins", len(alts), len(books)-1)
	}
	for _, b := range books {
		r, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "goblin", Documents: docs(b)}})
		if err != nil || len(r.GetResults()) != 1 || r.GetResults()[0].GetEntity().GetDocument().GetKey() != b {
			t.Errorf("documents=[%s]: %v %v", b, docKeys(r.GetResults()), err)
		}
	}

	// Paging: every dragon once, whether as a result or an alternate.
	want := map[string]bool{}
	for _, e := range snap.entities {
		if e.GetKind() == lkv1.Kind_KIND_CREATURE && strings.Contains(strings.ToLower(e.GetName()), "dragon") {
			want[e.GetKey()] = true
		}
	}
	got := map[string]int{}
	cursor, pages := "", 0
	for {
		r, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "*dragon*", Limit: 7, Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(r.GetResults()) > 7 {
			t.Fatalf("page %d: %d results, limit 7", pages, len(r.GetResults()))
		}
		for _, res := range r.GetResults() {
			got[res.GetEntity().GetKey()]++
			for _, a := range res.GetAlternates() {
				got[a.GetKey()]++
			}
		}
		if cursor = r.GetNextCursor(); cursor == "" || pages > 1000 {
			break
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("%s returned %d times", k, got[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entities returned over %d pages, want %d", len(got), pages, len(want))
	}
}

// TestLookup_ReadingOrder: a name the catalogue writes head first
// ("Crossbow, light", "Lantern, Hooded", "Minotaur, Ravening") is found by
// the words people say ("light crossbow"), and is the same name as the
// other books' entity so called: one result, the others its alternates,
// each alternate named when its name is not the result's.
func TestLookup_ReadingOrder(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	// Every entity of a kind under each reading-order name, from the data.
	type kindName struct {
		kind lkv1.Kind
		name string
	}
	same := map[kindName]map[string]string{} // -> key -> name
	inverted := map[kindName]bool{}
	for _, e := range snap.entities {
		kn := kindName{e.GetKind(), rel.ReadingOrder(e.GetName())}
		if same[kn] == nil {
			same[kn] = map[string]string{}
		}
		same[kn][e.GetKey()] = e.GetName()
		if kn.name != strings.ToLower(e.GetName()) {
			inverted[kn] = true
		}
	}
	if len(inverted) < 50 {
		t.Fatalf("%d names written head first in the snapshot; the test wants many", len(inverted))
	}
	for _, kn := range []kindName{{lkv1.Kind_KIND_WEAPON, "light crossbow"}, {lkv1.Kind_KIND_ITEM, "hooded lantern"}, {lkv1.Kind_KIND_CREATURE, "ravening minotaur"}} {
		if !inverted[kn] {
			t.Errorf("%v %q: not written head first in the snapshot", kn.kind, kn.name)
		}
	}
	for kn := range inverted {
		resp, err := lookupOfKind(ctx, c, kn.kind, &lkv1.Common{Name: kn.name, Limit: 50})
		if err != nil {
			t.Fatalf("%v %q: %v", kn.kind, kn.name, err)
		}
		got := map[string]bool{}
		for _, r := range resp.GetResults() {
			if r.GetEntity().GetKind() != kn.kind {
				continue
			}
			got[r.GetEntity().GetKey()] = true
			for _, a := range r.GetAlternates() {
				got[a.GetKey()] = true
				if want := same[kn][a.GetKey()]; (a.GetName() != "") != (want != r.GetEntity().GetName()) || a.GetName() != "" && a.GetName() != want {
					t.Errorf("%q: alternate %s named %q, its name %q, the result's %q", kn.name, a.GetKey(), a.GetName(), want, r.GetEntity().GetName())
				}
			}
		}
		if n := len(resp.GetResults()); n != 1 {
			t.Errorf("%v %q: %d results, want one with the other books' copies its alternates", kn.kind, kn.name, n)
		}
		for key := range same[kn] {
			if !got[key] {
				t.Errorf("%v %q: %s (%q) not returned", kn.kind, kn.name, key, same[kn][key])
			}
		}
	}
}

// TestLookup_sameNameSameBook: rules a book has twice under one name (SRD
// 5.1's Speed in Monsters, Movement and Races) are not copies of each
// other: a lookup of the name shows one, and names every other of that
// book by its section, also when another book's copy is the one shown,
// for every such name in the snapshot.
func TestLookup_sameNameSameBook(t *testing.T) {
	c := client(t)
	groups := map[string][]*lkv1.Entity{}
	for _, e := range snap.entities {
		if e.GetKind() == lkv1.Kind_KIND_RULE {
			k := e.GetDocument().GetKey() + "\x00" + strings.ToLower(e.GetName())
			groups[k] = append(groups[k], e)
		}
	}
	n := 0
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		n++
		doc, name := g[0].GetDocument().GetKey(), g[0].GetName()
		resp, err := c.LookupRules(t.Context(), &lkv1.LookupRulesRequest{Common: &lkv1.Common{Name: name}})
		if err != nil {
			t.Fatal(err)
		}
		var r *lkv1.Result
		for _, x := range resp.GetResults() {
			if x.GetEntity().GetKind() == lkv1.Kind_KIND_RULE {
				if r != nil {
					t.Errorf("%s %q: two rule results, want one with the others as alternates", doc, name)
				}
				r = x
			}
		}
		if r == nil {
			t.Errorf("%s %q: no rule found", doc, name)
			continue
		}
		named := map[string]string{r.GetEntity().GetKey(): name}
		for _, a := range r.GetAlternates() {
			named[a.GetKey()] = a.GetName()
		}
		for _, e := range g {
			got, ok := named[e.GetKey()]
			want := name
			if e.GetKey() != r.GetEntity().GetKey() && !strings.EqualFold(e.GetRule().GetSectionName(), name) {
				want = name + " (" + e.GetRule().GetSectionName() + ")"
			}
			if !ok || got != want {
				t.Errorf("%s %q: %s named %q (listed %v), want %q", doc, name, e.GetKey(), got, ok, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no book has two rules of one name: nothing checked")
	}
	t.Logf("%d names a book gives two or more rules", n)
}

// lookupOfKind calls the lookup serving kind, narrowed to kind.
func lookupOfKind(ctx context.Context, c lkv1.QueryServiceClient, k lkv1.Kind, com *lkv1.Common) (*lkv1.LookupResponse, error) {
	switch ks := []lkv1.Kind{k}; {
	case k == lkv1.Kind_KIND_SPELL:
		return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: com})
	case k == lkv1.Kind_KIND_CREATURE:
		return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: com})
	case slices.Contains(lkv1.EquipmentKinds(), k):
		return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: com, Kinds: ks})
	case slices.Contains(lkv1.CharacterOptionKinds(), k):
		return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: com, Kinds: ks})
	default:
		return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: com, Kinds: ks})
	}
}

// singularOf is a name whose last word is an English plural with that
// word in the singular; "" for any other name.
func singularOf(name string) string {
	last := name[strings.LastIndex(name, " ")+1:]
	stem, ok := strings.CutSuffix(last, "s")
	switch {
	case !ok || len(stem) < 3 || strings.ContainsAny(last, "'’()") || strings.HasSuffix(stem, "xe") ||
		strings.HasSuffix(stem, "s") || strings.HasSuffix(stem, "u") || strings.HasSuffix(stem, "i"):
		return "" // "axes": axe or ax
	case strings.HasSuffix(stem, "ie") && len(stem) > 3:
		stem = strings.TrimSuffix(stem, "ie") + "y"
	case strings.HasSuffix(stem, "sse"), strings.HasSuffix(stem, "che"), strings.HasSuffix(stem, "she"):
		stem = strings.TrimSuffix(stem, "e")
	}
	return name[:len(name)-len(last)] + stem
}

// TestLookup_inflection: every name of the catalogue whose last word is a
// plural is found by its singular, unless the singular is a name itself
// (then that one answers): recall over the whole snapshot.
func TestLookup_inflection(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	named := map[string]bool{}
	for _, e := range snap.entities {
		named[strings.ToLower(e.GetName())] = true
	}
	tried, missed := 0, 0
	seen := map[string]bool{}
	for _, e := range snap.entities {
		name := strings.ToLower(e.GetName())
		singular := singularOf(name)
		// Names in index order ("rat, swarm of rats") are found in
		// reading order, as people say them.
		if singular == "" || strings.Contains(name, ",") || named[singular] || seen[singular+"\x00"+e.GetKind().String()] {
			continue
		}
		seen[singular+"\x00"+e.GetKind().String()] = true
		tried++
		resp, err := lookupOfKind(ctx, c, e.GetKind(), common(singular, 0))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range resp.GetResults() {
			found = found || r.GetEntity().GetKey() == e.GetKey()
			for _, a := range r.GetAlternates() {
				found = found || a.GetKey() == e.GetKey()
			}
		}
		if !found || resp.GetNameMatch() != "inflection" {
			missed++
			t.Errorf("%s %q: %v (match %q), want %s", e.GetKind(), singular, names(resp.GetResults()), resp.GetNameMatch(), e.GetName())
		}
	}
	if tried < 50 {
		t.Errorf("only %d plural names tried", tried)
	}
	t.Logf("%d of %d plural names found by their singular", tried-missed, tried)
}

// holdsPart reports whether e holds a part or feature named name: a
// heading of its text or of a block's (lkv1.TextParts), or a block's name.
func holdsPart(e *lkv1.Entity, name string) bool {
	texts := []string{e.GetDescription()}
	for _, b := range e.GetBlocks() {
		if strings.EqualFold(b.GetName(), name) {
			return true
		}
		texts = append(texts, b.GetText())
	}
	for _, t := range texts {
		for _, p := range lkv1.TextParts(t) {
			if strings.EqualFold(p.Name, name) {
				return true
			}
		}
	}
	return false
}

// TestLookup_parts: a name no entity bears that heads a part of rules'
// texts ("surprise") or names a class's feature ("sneak attack") finds
// every entity holding it and nothing else (name_match "part"): recall
// and precision over the whole snapshot.
func TestLookup_parts(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	byKey := map[string]*lkv1.Entity{}
	holders := map[string][]*lkv1.Entity{} // kind and lower-case part name -> holders
	var order []string
	for _, e := range snap.entities {
		byKey[e.GetKey()] = e
		var parts []string
		isRule := slices.Contains(lkv1.RuleKinds(), e.GetKind())
		if isRule {
			for _, t := range append([]string{e.GetDescription()}, blockTexts(e)...) {
				for _, p := range lkv1.TextParts(t) {
					parts = append(parts, p.Name)
				}
			}
		}
		for _, b := range e.GetBlocks() {
			if isRule || b.GetType() == "feature" {
				parts = append(parts, b.GetName())
			}
		}
		for _, p := range parts {
			kind := e.GetKind().String()
			if isRule {
				kind = "rules" // lookup_rule, every rule kind at once
			}
			k := kind + "\x00" + strings.ToLower(p)
			if len(holders[k]) == 0 {
				order = append(order, k)
			}
			if !slices.Contains(holders[k], e) {
				holders[k] = append(holders[k], e)
			}
		}
	}
	tried, named := 0, 0
	for _, k := range order {
		kindName, part, _ := strings.Cut(k, "\x00")
		var resp *lkv1.LookupResponse
		var err error
		if kindName == "rules" {
			resp, err = c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: common(part, 100)})
		} else {
			resp, err = lookupOfKind(ctx, c, lkv1.Kind(lkv1.Kind_value[kindName]), common(part, 100))
		}
		if err != nil {
			t.Fatal(err)
		}
		got := returnedKeys(resp.GetResults())
		if m := resp.GetNameMatch(); m != "part" {
			// Something bears the name itself: it answers.
			if m == "" || len(got) == 0 {
				t.Errorf("%s %q: nothing found (match %q), want its holders %s", kindName, part, m, holders[k][0].GetKey())
			}
			named++
			continue
		}
		tried++
		for key := range got {
			if !holdsPart(byKey[key], part) {
				t.Errorf("%s %q: %s holds no part so named", kindName, part, key)
			}
		}
		// A rule section holds its book's rules: where a rule of the book
		// holds the part, the rule answers, not the section again.
		ruled := map[string]bool{}
		for _, e := range holders[k] {
			if e.GetKind() == lkv1.Kind_KIND_RULE {
				ruled[e.GetDocument().GetKey()] = true
			}
		}
		for _, e := range holders[k] {
			if e.GetKind() == lkv1.Kind_KIND_RULE_SECTION && ruled[e.GetDocument().GetKey()] {
				if got[e.GetKey()] {
					t.Errorf("%s %q: %s, a section whose rule holds it, found beside the rule", kindName, part, e.GetKey())
				}
				continue
			}
			if !got[e.GetKey()] {
				t.Errorf("%s %q: %s, which holds it, not found among %d", kindName, part, e.GetKey(), len(got))
			}
		}
	}
	if tried < 100 {
		t.Errorf("only %d part names tried", tried)
	}
	t.Logf("%d part names found as parts, %d answered by an entity of that name", tried, named)
}

// returnedKeys are the keys of rs and of their alternates (a name's
// copies in other books, folded into the result without a documents
// filter).
func returnedKeys(rs []*lkv1.Result) map[string]bool {
	got := map[string]bool{}
	for _, r := range rs {
		got[r.GetEntity().GetKey()] = true
		for _, a := range r.GetAlternates() {
			got[a.GetKey()] = true
		}
	}
	return got
}

func blockTexts(e *lkv1.Entity) []string {
	var out []string
	for _, b := range e.GetBlocks() {
		out = append(out, b.GetText())
	}
	return out
}

package query_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// srdSpells are the keys of the snapshot's SRD 5.1 spells.
func srdSpells(t *testing.T) map[string]bool {
	t.Helper()
	snapshotStore(t)
	want := map[string]bool{}
	for _, e := range snap.entities {
		if e.GetKind() == lkv1.Kind_KIND_SPELL && e.GetDocument().GetKey() == "srd-2014" {
			want[e.GetKey()] = true
		}
	}
	return want
}

// walk pages through a lookup, calling between after each page, and
// returns the keys in the order seen.
func walk(t *testing.T, call func(cursor string) (*lkv1.LookupResponse, error), between func()) []string {
	t.Helper()
	var keys []string
	cursor := ""
	for page := 0; page < 200; page++ {
		resp, err := call(cursor)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		for _, r := range resp.GetResults() {
			keys = append(keys, r.GetEntity().GetKey())
		}
		if cursor = resp.GetNextCursor(); cursor == "" {
			return keys
		}
		between()
	}
	t.Fatal("over 200 pages")
	return nil
}

// exactlyOnce reports the keys of want missing from got, and the keys got
// more than once.
func exactlyOnce(want map[string]bool, got []string) (missing, repeated []string) {
	seen := map[string]int{}
	for _, k := range got {
		seen[k]++
		if seen[k] == 2 {
			repeated = append(repeated, k)
		}
	}
	for k := range want {
		if seen[k] == 0 {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	return missing, repeated
}

func TestLookup_Pages(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	want := srdSpells(t)
	if len(want) != 319 {
		t.Fatalf("the snapshot has %d SRD 5.1 spells, want 319", len(want))
	}
	var totals []uint64
	keys := walk(t, func(cur string) (*lkv1.LookupResponse, error) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 50, Documents: docs("srd-2014"), Cursor: cur}})
		totals = append(totals, resp.GetTotal())
		return resp, err
	}, func() {})
	missing, repeated := exactlyOnce(want, keys)
	if len(keys) != 319 || len(missing) > 0 || len(repeated) > 0 {
		t.Errorf("walk: %d keys, missing %v, repeated %v; want all 319 once", len(keys), missing, repeated)
	}
	if len(totals) != 7 || totals[0] != 319 {
		t.Errorf("pages = %d, totals %v; want 7 pages of total 319", len(totals), totals)
	}
	// A name pattern pages the same way.
	keys = walk(t, func(cur string) (*lkv1.LookupResponse, error) {
		return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "c*", Limit: 7, Documents: docs("srd-2014"), Cursor: cur}})
	}, func() {})
	all, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "c*", Limit: 100, Documents: docs("srd-2014")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := keys, keysOf(all.GetResults()); !slices.Equal(got, w) || len(w) < 20 {
		t.Errorf("paged c* = %d keys, one page %d; want the same list (20+)", len(got), len(w))
	}
}

func keysOf(rs []*lkv1.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.GetEntity().GetKey()
	}
	return out
}

// writableStore is a store of its own holding the snapshot's spells (no
// vectors: ranked requests rank by keywords), for tests that write while
// they read.
func writableStore(t *testing.T) *badgerstore.Store {
	t.Helper()
	snapshotStore(t)
	st, err := badgerstore.Open(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var writes []badgerstore.Write
	for _, e := range snap.entities {
		if e.GetKind() == lkv1.Kind_KIND_SPELL || e.GetKind() == lkv1.Kind_KIND_CONDITION {
			writes = append(writes, badgerstore.Write{Entity: e})
		}
	}
	if err := st.Apply(context.Background(), writes); err != nil {
		t.Fatal(err)
	}
	return st
}

// churn writes n new spells into the SRD 5.1 document, named to fall all
// over name order and to match ranked queries, and deletes each previous
// batch, so that slots are freed and reused while pages are read.
func churn(t *testing.T, st *badgerstore.Store, round int) {
	t.Helper()
	doc := &lkv1.Document{Key: "srd-2014", Name: "System Reference Document 5.1", Source: lkv1.Source_SOURCE_OPEN5E_V2, GameSystem: "5e-2014"}
	var writes []badgerstore.Write
	if round > 0 {
		for i := range 26 {
			writes = append(writes, badgerstore.Write{DeleteKey: fmt.Sprintf("test:srd-2014:spell:churn-%d-%d", round-1, i)})
		}
	}
	for i := range 26 {
		name := fmt.Sprintf("%c churned fire spell %d", 'a'+i, round)
		writes = append(writes, badgerstore.Write{Entity: &lkv1.Entity{
			Key: fmt.Sprintf("test:srd-2014:spell:churn-%d-%d", round, i), Slug: lkv1.Slugify(name), Name: name,
			Kind: lkv1.Kind_KIND_SPELL, Document: doc, Description: "A burst of fire and flame damages creatures.",
			Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: int32(i % 10), School: "evocation"}},
		}})
	}
	if err := st.Apply(context.Background(), writes); err != nil {
		t.Fatal(err)
	}
}

// While entities are written and deleted between pages, a walk still
// returns every entity that existed at the first page exactly once: in name
// order and in ranked order.
func TestLookup_PagesUnderIngestion(t *testing.T) {
	st := writableStore(t)
	c := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, nil, nil), nil))
	ctx := context.Background()
	want := srdSpells(t)
	round := 0
	between := func() { churn(t, st, round); round++ }

	keys := walk(t, func(cur string) (*lkv1.LookupResponse, error) {
		return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 50, Documents: docs("srd-2014"), Cursor: cur}})
	}, between)
	if missing, repeated := exactlyOnce(want, keys); len(missing) > 0 || len(repeated) > 0 {
		t.Errorf("name order under ingestion: missing %v, repeated %v", missing, repeated)
	}

	// Ranked: the first page fixes the list.
	req := func(cur string) *lkv1.LookupSpellsRequest {
		return &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 10, SemanticQuery: "fire damage", Documents: docs("srd-2014"), Cursor: cur}}
	}
	first, err := c.LookupSpells(ctx, req(""))
	if err != nil {
		t.Fatal(err)
	}
	if first.GetNextCursor() == "" || first.GetTotal() <= 10 {
		t.Fatalf("ranked first page: total %d, cursor %q; want more than one page", first.GetTotal(), first.GetNextCursor())
	}
	rankedWant := map[string]bool{}
	ranked := keysOf(first.GetResults())
	cur := first.GetNextCursor()
	for cur != "" {
		between()
		resp, err := c.LookupSpells(ctx, req(cur))
		if err != nil {
			t.Fatal(err)
		}
		ranked = append(ranked, keysOf(resp.GetResults())...)
		cur = resp.GetNextCursor()
	}
	// What existed at the first page and still exists: everything ranked
	// that is not a churned spell deleted since.
	for _, k := range ranked {
		if !strings.HasPrefix(k, "test:") {
			rankedWant[k] = true
		}
	}
	if missing, repeated := exactlyOnce(rankedWant, ranked); len(repeated) > 0 || len(missing) > 0 {
		t.Errorf("ranked under ingestion: missing %v, repeated %v", missing, repeated)
	}
	if n := len(rankedWant); uint64(n) > first.GetTotal() || n < int(first.GetTotal())-26 {
		t.Errorf("ranked walk returned %d lasting entities, first page said total %d", n, first.GetTotal())
	}
	// The ranked walk found the fire spells that existed, in order of the first page.
	for _, name := range []string{"open5e_v2:srd-2014:spell:fireball", "open5e_v2:srd-2014:spell:fire-bolt"} {
		if !rankedWant[name] {
			t.Errorf("ranked walk misses %s", name)
		}
	}
}

func TestSearch_Pages(t *testing.T) {
	st := writableStore(t)
	c := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, nil, nil), nil))
	ctx := context.Background()
	f := false
	req := &lkv1.SearchRequest{Query: "fire", Limit: 5, Semantic: &f}
	first, err := c.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.GetNextCursor() == "" {
		t.Fatal("search for fire, 5 per kind: no next_cursor")
	}
	totals := map[lkv1.Kind]uint64{}
	seen := map[lkv1.Kind][]string{}
	for _, g := range first.GetGroups() {
		totals[g.GetKind()] = g.GetTotal()
		seen[g.GetKind()] = keysOf(g.GetResults())
	}
	cur := first.GetNextCursor()
	for i := 0; cur != "" && i < 100; i++ {
		churn(t, st, i)
		next := proto.Clone(req).(*lkv1.SearchRequest)
		next.Cursor = cur
		resp, err := c.Search(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range resp.GetGroups() {
			seen[g.GetKind()] = append(seen[g.GetKind()], keysOf(g.GetResults())...)
		}
		cur = resp.GetNextCursor()
	}
	spells := seen[lkv1.Kind_KIND_SPELL]
	if len(spells) != int(totals[lkv1.Kind_KIND_SPELL]) || len(spells) <= 5 {
		t.Errorf("spells over all pages = %d, first page said %d; want equal, over one page", len(spells), totals[lkv1.Kind_KIND_SPELL])
	}
	if _, repeated := exactlyOnce(nil, spells); len(repeated) > 0 {
		t.Errorf("repeated across pages: %v", repeated)
	}
	for _, k := range spells {
		if strings.HasPrefix(k, "test:") {
			t.Errorf("a spell written after the first page appeared: %s", k)
		}
	}
}

func TestPages_BadCursor(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	first, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 5, Documents: docs("srd-2014")}})
	if err != nil || first.GetNextCursor() == "" {
		t.Fatalf("first page: %v, cursor %q", err, first.GetNextCursor())
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"garbage", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Cursor: "not-a-cursor!"}})
			return err
		}, "not a cursor"},
		{"other filters", func() error {
			_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 5, Documents: docs("srd-2024"), Cursor: first.GetNextCursor()}})
			return err
		}, "different request"},
		{"other tool", func() error {
			_, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Limit: 5, Documents: docs("srd-2014"), Cursor: first.GetNextCursor()}})
			return err
		}, "different request"},
		{"search with a lookup cursor", func() error {
			_, err := c.Search(ctx, &lkv1.SearchRequest{Query: "fire", Cursor: first.GetNextCursor()})
			return err
		}, "different request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want InvalidArgument mentioning %q", err, tc.want)
			}
		})
	}
	// Only the limit may change between pages.
	resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 9, Documents: docs("srd-2014"), Cursor: first.GetNextCursor()}})
	if err != nil || len(resp.GetResults()) != 9 {
		t.Errorf("next page with another limit: %d results, %v; want 9", len(resp.GetResults()), err)
	}
}

func TestListDocuments_Pages(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	all, err := c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	cur := ""
	for i := 0; i < 100; i++ {
		resp, err := c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{Limit: 4, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetTotal() != uint64(len(all.GetDocuments())) {
			t.Errorf("total = %d, want %d", resp.GetTotal(), len(all.GetDocuments()))
		}
		for _, d := range resp.GetDocuments() {
			got = append(got, d.GetDocument().GetSource().Slug()+"/"+d.GetDocument().GetKey())
		}
		if cur = resp.GetNextCursor(); cur == "" {
			break
		}
	}
	var want []string
	for _, d := range all.GetDocuments() {
		want = append(want, d.GetDocument().GetSource().Slug()+"/"+d.GetDocument().GetKey())
	}
	slices.Sort(want)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) || len(want) < 10 {
		t.Errorf("paged documents = %v\nwant %v", got, want)
	}
}

func TestCompleteValues(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	complete := func(f lkv1.CompletionField, prefix string, limit uint32, kinds ...lkv1.Kind) *lkv1.CompleteValuesResponse {
		t.Helper()
		resp, err := c.CompleteValues(ctx, &lkv1.CompleteValuesRequest{Field: f, Prefix: prefix, Limit: limit, Kinds: kinds})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, tc := range []struct {
		name      string
		field     lkv1.CompletionField
		prefix    string
		kinds     []lkv1.Kind
		first     string
		contains  []string
		forbidden []string
	}{
		{"spell name prefix", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "fireb", []lkv1.Kind{lkv1.Kind_KIND_SPELL}, "Fireball", []string{"Fireball"}, []string{"Fire Bolt"}},
		{"name word prefix", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "red drag", []lkv1.Kind{lkv1.Kind_KIND_CREATURE}, "Red Dragon Wyrmling", []string{"Adult Red Dragon", "Ancient Red Dragon"}, []string{"Red Slaad"}},
		{"key prefix", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY, "open5e_v2:srd-2014:spell:fireb", nil, "open5e_v2:srd-2014:spell:fireball", nil, []string{"open5e_v2:srd-2024:spell:fireball"}},
		{"key by name", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY, "fireball", []lkv1.Kind{lkv1.Kind_KIND_SPELL}, "open5e_v2:srd-2014:spell:fireball", []string{"open5e_v2:srd-2024:spell:fireball"}, nil},
		{"document", lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT, "srd", nil, "", []string{"srd-2014", "srd-2024"}, []string{"tob"}},
		{"document word", lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT, "2024", nil, "srd-2024", nil, nil},
		{"creature type", lkv1.CompletionField_COMPLETION_FIELD_CREATURE_TYPE, "und", nil, "undead", nil, []string{"dragon"}},
		{"environment", lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT, "for", nil, "", nil, []string{"desert"}},
		// A part no entity bears, after the names: a name lookup finds
		// what holds it.
		// (SRD 5.2's glossary has a Death Saving Throw: no longer a part
		// alone.)
		{"part name", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "instant de", []lkv1.Kind{lkv1.Kind_KIND_RULE, lkv1.Kind_KIND_RULE_SECTION}, "Instant Death", nil, nil},
		{"part name after names", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "surpr", nil, "", []string{"Surprise"}, nil},
		{"no part of other kinds", lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "surpr", []lkv1.Kind{lkv1.Kind_KIND_SPELL}, "", nil, []string{"Surprise"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := complete(tc.field, tc.prefix, 0, tc.kinds...)
			got := resp.GetValues()
			if len(got) == 0 || (tc.first != "" && got[0] != tc.first) {
				t.Fatalf("values = %v, want %q first", got, tc.first)
			}
			for _, v := range got {
				if l := strings.ToLower(v); !strings.HasPrefix(l, tc.prefix) && !strings.Contains(l, " "+tc.prefix) && !strings.Contains(l, "-"+tc.prefix) && !strings.HasSuffix(l, ":"+lkv1.Slugify(tc.prefix)) {
					t.Errorf("value %q does not match %q", v, tc.prefix)
				}
			}
			for _, w := range tc.contains {
				if !slices.Contains(got, w) {
					t.Errorf("values = %v, missing %q", got, w)
				}
			}
			for _, f := range tc.forbidden {
				if slices.Contains(got, f) {
					t.Errorf("values = %v, must not hold %q", got, f)
				}
			}
			if resp.GetTotal() != uint32(len(got)) || resp.GetHasMore() {
				t.Errorf("total %d, has_more %v for %d values", resp.GetTotal(), resp.GetHasMore(), len(got))
			}
		})
	}
	t.Run("at most 100, has more", func(t *testing.T) {
		resp := complete(lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "a", 0)
		if len(resp.GetValues()) != 100 || !resp.GetHasMore() || resp.GetTotal() <= 100 {
			t.Errorf("values %d, total %d, has_more %v; want 100 of more, has_more", len(resp.GetValues()), resp.GetTotal(), resp.GetHasMore())
		}
		small := complete(lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, "a", 5)
		if !slices.Equal(small.GetValues(), resp.GetValues()[:5]) {
			t.Errorf("limit 5 = %v, want the first five of %v", small.GetValues(), resp.GetValues()[:5])
		}
		for i, v := range resp.GetValues() {
			if !strings.HasPrefix(strings.ToLower(v), "a") && resp.GetTotal() > 100 {
				t.Errorf("value %d %q does not start with a, yet %d names do", i, v, resp.GetTotal())
				break
			}
		}
	})
	t.Run("no field", func(t *testing.T) {
		_, err := c.CompleteValues(ctx, &lkv1.CompleteValuesRequest{Prefix: "x"})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("err = %v, want InvalidArgument", err)
		}
	})
}

// BenchmarkCompleteValues reports the latency of completions in the
// service (no network), by field: p50 and p99.
func BenchmarkCompleteValues(b *testing.B) {
	svc := query.NewService(snapshotStore(b), nil, nil)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		req  *lkv1.CompleteValuesRequest
	}{
		{"name-prefix", &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, Prefix: "fire"}},
		{"name-one-letter", &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, Prefix: "s"}},
		{"key-prefix", &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY, Prefix: "open5e_v2:srd-2014:spell:"}},
		{"document", &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT, Prefix: "s"}},
		{"environment", &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT, Prefix: ""}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if _, err := svc.CompleteValues(ctx, bc.req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

// Ranked pages on several query nodes (behind a balancer, each page may
// reach another): a node that did not rank the first page ranks the request
// again and the walk goes on. Over the same content, every page alternating
// between two nodes gives the one-node walk exactly.
func TestPages_RankedAcrossNodes(t *testing.T) {
	snapshotStore(t)
	ctx := context.Background()
	nodes := []lkv1.QueryServiceClient{
		lkv1.NewQueryServiceClient(dial(t, query.NewService(snap.store, snap.emb, nil), nil)),
		lkv1.NewQueryServiceClient(dial(t, query.NewService(snap.store, snap.emb, nil), nil)),
	}
	for _, tc := range []struct {
		name string
		walk func(c func(page int) lkv1.QueryServiceClient) []string
	}{
		{"lookup", func(c func(int) lkv1.QueryServiceClient) []string {
			page := 0
			return walk(t, func(cur string) (*lkv1.LookupResponse, error) {
				page++
				return c(page).LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{
					SemanticQuery: "protect allies from fire", Limit: 40, Documents: docs("srd-2014"), Cursor: cur}})
			}, func() {})
		}},
		{"search", func(c func(int) lkv1.QueryServiceClient) []string {
			var keys []string
			cur := ""
			for page := 1; page < 100; page++ {
				// The kinds that hold many fiery entities: SRD 5.1's Fire damage
				// type, an exact name, would leave the weak matches out.
				resp, err := c(page).Search(ctx, &lkv1.SearchRequest{Query: "fire", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_CREATURE, lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_ITEM, lkv1.Kind_KIND_RULE}, Limit: 5, Documents: docs("srd-2014"), Cursor: cur})
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				for _, g := range resp.GetGroups() {
					keys = append(keys, keysOf(g.GetResults())...)
				}
				if cur = resp.GetNextCursor(); cur == "" {
					return keys
				}
			}
			t.Fatal("over 100 pages")
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one := tc.walk(func(int) lkv1.QueryServiceClient { return nodes[0] })
			two := tc.walk(func(page int) lkv1.QueryServiceClient { return nodes[page%2] })
			if len(one) < 100 {
				t.Fatalf("one-node walk: %d keys, want 100+ (several pages)", len(one))
			}
			if !slices.Equal(one, two) {
				t.Errorf("walk over two nodes differs from one node: %d keys vs %d", len(two), len(one))
			}
			if _, repeated := exactlyOnce(nil, two); len(repeated) > 0 {
				t.Errorf("repeated: %v", repeated)
			}
		})
	}
}

// TestLookup_RankedWalkEqualsFullRanking: a ranked walk, page by page
// (later pages ranked on demand), returns the very list one page holding
// everything returns, in the same order; and while entities are written
// between its pages it still does, less only the entities deleted
// meanwhile: a rewritten entity keeps its place, new ones stay out, and a
// freed slot's new entity does not stand in for the deleted one.
func TestLookup_RankedWalkEqualsFullRanking(t *testing.T) {
	st := writableStore(t)
	c := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, nil, &query.Options{MaxLimit: 10000}), nil))
	ctx := context.Background()
	req := func(limit int, cur string) *lkv1.LookupSpellsRequest {
		return &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: uint32(limit), SemanticQuery: "fire damage", Cursor: cur}}
	}
	all, err := c.LookupSpells(ctx, req(10000, ""))
	if err != nil {
		t.Fatal(err)
	}
	full := keysOf(all.GetResults())
	if len(full) < 100 || all.GetNextCursor() != "" || all.GetTotal() != uint64(len(full)) {
		t.Fatalf("one page of everything: %d results, total %d, cursor %q", len(full), all.GetTotal(), all.GetNextCursor())
	}

	walkRanked := func(between func(page int)) (keys []string, total uint64) {
		t.Helper()
		cur := ""
		for page := 0; ; page++ {
			resp, err := c.LookupSpells(ctx, req(7, cur))
			if err != nil {
				t.Fatalf("page %d: %v", page, err)
			}
			if page == 0 {
				total = resp.GetTotal()
			}
			keys = append(keys, keysOf(resp.GetResults())...)
			if cur = resp.GetNextCursor(); cur == "" {
				return keys, total
			}
			between(page)
		}
	}
	got, total := walkRanked(func(int) {})
	if !slices.Equal(got, full) || total != uint64(len(full)) {
		t.Errorf("walk of 7 a page: %d results (total %d), want the %d of one page in the same order", len(got), total, len(full))
	}

	// Under writes: churn adds and deletes other spells each page; a
	// spell of a later page is rewritten, another deleted.
	byKey := map[string]*lkv1.Entity{}
	for _, e := range snap.entities {
		byKey[e.GetKey()] = e
	}
	// The deleted spell has no copy in another document, which would
	// stand for its name in its place.
	rewritten, deleted := full[len(full)/2], ""
	for _, r := range all.GetResults()[len(full)/2+20:] {
		if len(r.GetAlternates()) == 0 {
			deleted = r.GetEntity().GetKey()
			break
		}
	}
	got, total = walkRanked(func(page int) {
		churn(t, st, page)
		if page == 1 {
			e := proto.Clone(byKey[rewritten]).(*lkv1.Entity)
			e.Description += " Rewritten."
			if err := st.Apply(ctx, []badgerstore.Write{{Entity: e}, {DeleteKey: deleted}}); err != nil {
				t.Fatal(err)
			}
			// A new spell takes the deleted one's slot.
			e = proto.Clone(byKey[deleted]).(*lkv1.Entity)
			e.Key, e.Name, e.Slug = "test:srd-2014:spell:successor", "Successor", "successor"
			if err := st.Apply(ctx, []badgerstore.Write{{Entity: e}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	want := slices.DeleteFunc(slices.Clone(full), func(k string) bool { return k == deleted })
	if !slices.Equal(got, want) || total != uint64(len(full)) {
		missing, repeated := exactlyOnce(nil, got)
		t.Errorf("walk under writes: %d results (total %d), want %d in the order of one page; repeated %v, missing %v", len(got), total, len(want), repeated, missing)
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("first difference at %d: %s, want %s", i, got[i], want[i])
				break
			}
		}
	}
}

// TestRankedWalks_WhileSnapshotsTurnOver: ranked walks, side by side,
// each making first pages of its own between its pages (pushing snapshots
// out of the cache, whose arrays the next rankings take over), still
// return the list one page holding everything returns, in its order. Run
// with -race: an array reused while a page still read it is a data race,
// and a walk that reads another ranking's candidates.
func TestRankedWalks_WhileSnapshotsTurnOver(t *testing.T) {
	st := snapshotStore(t)
	svc := query.NewService(st, snap.emb, &query.Options{MaxLimit: 10000})
	ctx := context.Background()
	req := func(q string, limit int, cur string) *lkv1.LookupSpellsRequest {
		return &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: uint32(limit), SemanticQuery: q, Cursor: cur}}
	}
	queries := []string{"fire damage", "heal an ally", "stop enemies from moving"}
	full := map[string][]string{}
	for _, q := range queries {
		all, err := svc.LookupSpells(ctx, req(q, 10000, ""))
		if err != nil {
			t.Fatal(err)
		}
		if full[q] = keysOf(all.GetResults()); len(full[q]) < 500 {
			t.Fatalf("%q: %d results in one page; want the snapshot's spells", q, len(full[q]))
		}
	}
	const firstPages = 6 // a walker's, between two of its pages
	errs := make(chan error, len(queries))
	for i, q := range queries {
		go func() {
			var got []string
			cur := ""
			for page := 0; ; page++ {
				resp, err := svc.LookupSpells(ctx, req(q, 40, cur))
				if err != nil {
					errs <- err
					return
				}
				got = append(got, keysOf(resp.GetResults())...)
				if cur = resp.GetNextCursor(); cur == "" {
					break
				}
				for k := range firstPages {
					if _, err := svc.LookupSpells(ctx, req(queries[(i+k)%len(queries)], 3, "")); err != nil {
						errs <- err
						return
					}
				}
			}
			if !slices.Equal(got, full[q]) {
				missing, repeated := exactlyOnce(nil, got)
				errs <- fmt.Errorf("%q: walk of %d results, want the %d of one page in order; repeated %v, missing %v", q, len(got), len(full[q]), repeated, missing)
				return
			}
			errs <- nil
		}()
	}
	for range queries {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	// The first pages made were more than the cache keeps: it turned over.
	if pages := len(full[queries[0]]) / 40 * firstPages * len(queries); pages <= query.MaxSnapshots {
		t.Errorf("%d first pages beside the walks; want more than the %d snapshots kept", pages, query.MaxSnapshots)
	}
}

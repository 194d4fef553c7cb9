package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// relevanceCase is a line of testdata/relevance.jsonl (copied from the
// project's shared data pack, data/relevance.jsonl).
type relevanceCase struct {
	Tool         string          `json:"tool"`
	Semantic     string          `json:"semantic_query"`
	Query        string          `json:"query"`
	Filters      relevanceFilter `json:"filters"`
	ExpectInTop5 []string        `json:"expect_in_top5"`
	ExpectAbove  [][2]string     `json:"expect_above"`
}

type relevanceFilter struct {
	Documents []string `json:"documents"`
	Level     *int32   `json:"level"`
	School    string   `json:"school"`
	Ritual    *bool    `json:"ritual"`
	Type      string   `json:"type"`
	CRMax     *float64 `json:"cr_max"`
	RuleType  string   `json:"rule_type"`
}

func readRelevance(t *testing.T) []relevanceCase {
	t.Helper()
	f, err := os.Open("testdata/relevance.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []relevanceCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c relevanceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("relevance line %q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// ranked runs a relevance case and returns the result names, best first.
func (c relevanceCase) ranked(ctx context.Context, cl lkv1.QueryServiceClient) ([]string, error) {
	f := c.Filters
	com := &lkv1.Common{SemanticQuery: c.Semantic, Limit: 10}
	if f.Documents != nil {
		com.Documents = docs(f.Documents...)
	}
	kind := func(s string) []lkv1.Kind {
		if k, ok := lkv1.KindFromSlug(s); ok {
			return []lkv1.Kind{k}
		}
		return nil
	}
	var resp *lkv1.LookupResponse
	var err error
	switch c.Tool {
	case "lookup_spell":
		req := &lkv1.LookupSpellsRequest{Common: com, Ritual: f.Ritual}
		if f.Level != nil {
			req.Levels = []int32{*f.Level}
		}
		if f.School != "" {
			req.Schools = []string{f.School}
		}
		resp, err = cl.LookupSpells(ctx, req)
	case "lookup_creature":
		req := &lkv1.LookupCreaturesRequest{Common: com}
		if f.Type != "" {
			req.Types = []string{f.Type}
		}
		if f.CRMax != nil {
			req.CrRange = &lkv1.DoubleRange{Max: f.CRMax}
		}
		resp, err = cl.LookupCreatures(ctx, req)
	case "lookup_equipment":
		resp, err = cl.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: com, Kinds: kind(f.Type)})
	case "lookup_character_option":
		resp, err = cl.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: com, Kinds: kind(f.Type)})
	case "lookup_rule":
		resp, err = cl.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: com, Kinds: kind(f.RuleType)})
	case "search_dnd_content":
		req := &lkv1.SearchRequest{Query: c.Query, Limit: 10}
		if f.Documents != nil {
			req.Documents = docs(f.Documents...)
		}
		sr, err := cl.Search(ctx, req)
		if err != nil {
			return nil, err
		}
		var all []*lkv1.Result
		for _, g := range sr.GetGroups() {
			all = append(all, g.GetResults()...)
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].GetSimilarityScore() > all[j].GetSimilarityScore() })
		return names(all), nil
	}
	if err != nil {
		return nil, err
	}
	return names(resp.GetResults()), nil
}

// TestRelevance measures, per tool, the share of queries with every
// expected name in the top five (and every expect_above pair in order) and
// the mean reciprocal rank of the first expected name, with the real model.
func TestRelevance(t *testing.T) {
	cl := client(t)
	if snap.emb == nil {
		t.Fatal("no embedding model")
	}
	if w := os.Getenv("LOREKEEPER_SWEEP"); w != "" {
		for _, cw := range []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7} {
			c := lkv1.NewQueryServiceClient(dial(t, query.NewService(snap.store, snap.emb, &query.Options{CosineWeight: cw}), nil))
			t.Run(fmt.Sprint(cw), func(t *testing.T) { relevance(t, c) })
		}
		return
	}
	relevance(t, cl)
}

func relevance(t *testing.T, cl lkv1.QueryServiceClient) {
	ctx := context.Background()
	type tally struct {
		n, pass int
		rr      float64
	}
	per := map[string]*tally{}
	total := &tally{}
	for _, c := range readRelevance(t) {
		got, err := c.ranked(ctx, cl)
		if err != nil {
			t.Fatalf("%s %q: %v", c.Tool, c.Semantic+c.Query, err)
		}
		lower := make([]string, len(got))
		for i, n := range got {
			lower[i] = strings.ToLower(n)
		}
		pos := func(name string) int { return slices.Index(lower, strings.ToLower(name)) }
		ok := true
		for _, want := range c.ExpectInTop5 {
			if p := pos(want); p < 0 || p >= 5 {
				ok = false
			}
		}
		for _, pair := range c.ExpectAbove {
			a, b := pos(pair[0]), pos(pair[1])
			if a < 0 || b >= 0 && b < a {
				ok = false
			}
		}
		rr := 0.0
		if p := pos(c.ExpectInTop5[0]); p >= 0 {
			rr = 1 / float64(p+1)
		}
		if ok && rr < 1 {
			t.Logf("rank %d: %s %q -> %v", int(1/rr+0.5), c.Tool, c.Semantic+c.Query, got[:min(5, len(got))])
		}
		if !ok {
			t.Logf("miss: %s %q -> %v (want %v above %v)", c.Tool, c.Semantic+c.Query, got[:min(5, len(got))], c.ExpectInTop5, c.ExpectAbove)
		}
		for _, tl := range []*tally{total, per[c.Tool]} {
			if tl == nil {
				tl = &tally{}
				per[c.Tool] = tl
			}
			tl.n++
			tl.rr += rr
			if ok {
				tl.pass++
			}
		}
	}
	tools := make([]string, 0, len(per))
	for k := range per {
		tools = append(tools, k)
	}
	sort.Strings(tools)
	for _, k := range tools {
		tl := per[k]
		t.Logf("%-24s %2d queries  top5 %5.1f%%  MRR %.3f", k, tl.n, 100*float64(tl.pass)/float64(tl.n), tl.rr/float64(tl.n))
	}
	share, mrr := float64(total.pass)/float64(total.n), total.rr/float64(total.n)
	t.Logf("%-24s %2d queries  top5 %5.1f%%  MRR %.3f", "all", total.n, 100*share, mrr)
	// The goal is a top-5 share of 0.95 and an MRR of 0.85. The share is
	// asserted at the goal; the MRR (0.831 when this was written) at a floor
	// that catches regressions, until ranking reaches the goal.
	if share < 0.95 || mrr < 0.82 {
		t.Errorf("top-5 share %.3f, MRR %.3f; want at least 0.95 and 0.82 (goal 0.85)", share, mrr)
	}
}

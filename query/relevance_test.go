package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// relevanceFiles are the development queries: relevance.jsonl, which
// ranking was first designed on, relevance-more.jsonl, written the way
// players ask (some with typos) and not seen when it was, and
// relevance-everyday.jsonl, a new user's everyday questions over the whole
// catalogue, naming no book (any one of expect_any_in_top5 is a right
// answer). All are copies of the project's shared data pack.
var relevanceFiles = []string{"testdata/relevance.jsonl", "testdata/relevance-more.jsonl", "testdata/relevance-everyday.jsonl"}

// relevanceCase is a line of a relevance file.
type relevanceCase struct {
	Tool         string          `json:"tool"`
	Semantic     string          `json:"semantic_query"`
	Query        string          `json:"query"`
	Filters      relevanceFilter `json:"filters"`
	ExpectInTop5 []string        `json:"expect_in_top5"`
	// ExpectAnyInTop5 are alternatives: any one in the top five will do.
	ExpectAnyInTop5 []string    `json:"expect_any_in_top5"`
	ExpectAbove     [][2]string `json:"expect_above"`
}

type relevanceFilter struct {
	Documents []string `json:"documents"`
	Level     *int32   `json:"level"`
	School    string   `json:"school"`
	Ritual    *bool    `json:"ritual"`
	Type      string   `json:"type"`
	CRMax     *float64 `json:"cr_max"`
	RuleType  string   `json:"rule_type"`
	// EntityTypes are search's entity_types ("spells").
	EntityTypes []string `json:"entity_types"`
}

// everydayFile is scored apart from the development files' floors.
const everydayFile = "testdata/relevance-everyday.jsonl"

func readRelevance(t *testing.T, path string) []relevanceCase {
	t.Helper()
	f, err := os.Open(path)
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
		for _, et := range f.EntityTypes {
			req.Kinds = append(req.Kinds, kind(strings.TrimSuffix(et, "s"))...)
		}
		if f.Documents != nil {
			req.Documents = docs(f.Documents...)
		}
		sr, err := cl.Search(ctx, req)
		if err != nil {
			return nil, err
		}
		// In the answer's order: the groups best first, each ranked, as
		// the answer lists them (a tier a question's words put first is
		// no similarity).
		var all []*lkv1.Result
		for _, g := range sr.GetGroups() {
			all = append(all, g.GetResults()...)
		}
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
		for _, cw := range []float64{0.3, 0.4, 0.5, 0.6, 0.7} {
			c := lkv1.NewQueryServiceClient(dial(t, query.NewService(snap.store, snap.emb, &query.Options{CosineWeight: cw}), nil))
			t.Run(fmt.Sprint(cw), func(t *testing.T) { relevance(t, c) })
		}
		return
	}
	if os.Getenv("LOREKEEPER_SWEEP_PRIOR") != "" {
		for _, w := range []float64{-1, 0.05, 0.1, 0.15, 0.2, 0.3} {
			c := lkv1.NewQueryServiceClient(dial(t, query.NewService(snap.store, snap.emb, &query.Options{AuthorityPrior: w}), nil))
			t.Run(fmt.Sprint("prior ", w), func(t *testing.T) { relevance(t, c) })
		}
		return
	}
	relevance(t, cl)
}

// relevanceTally counts passes and reciprocal ranks.
type relevanceTally struct {
	n, pass int
	rr      float64
}

func (tl *relevanceTally) add(ok bool, rr float64) {
	tl.n++
	tl.rr += rr
	if ok {
		tl.pass++
	}
}

func (tl *relevanceTally) share() float64 { return float64(tl.pass) / float64(max(tl.n, 1)) }
func (tl *relevanceTally) mrr() float64   { return tl.rr / float64(max(tl.n, 1)) }

func relevance(t *testing.T, cl lkv1.QueryServiceClient) {
	ctx := context.Background()
	per := map[string]*relevanceTally{}
	tally := func(k string) *relevanceTally {
		if per[k] == nil {
			per[k] = &relevanceTally{}
		}
		return per[k]
	}
	for _, file := range relevanceFiles {
		for _, c := range readRelevance(t, file) {
			got, err := c.ranked(ctx, cl)
			if err != nil {
				t.Fatalf("%s %q: %v", c.Tool, c.Semantic+c.Query, err)
			}
			ok, rr := c.score(got)
			if ok && rr < 1 {
				t.Logf("rank %d: %s %q -> %v", int(1/rr+0.5), c.Tool, c.Semantic+c.Query, got[:min(5, len(got))])
			}
			if !ok {
				t.Logf("miss: %s %q -> %v (want %v%v above %v)", c.Tool, c.Semantic+c.Query, got[:min(5, len(got))], c.ExpectInTop5, c.ExpectAnyInTop5, c.ExpectAbove)
			}
			base := filepath.Base(file)
			sets := []string{base, base + " " + c.Tool}
			if file != everydayFile {
				// "all" is the development files, whose floors follow.
				sets = append(sets, "all", "all "+c.Tool)
			}
			for _, k := range sets {
				tally(k).add(ok, rr)
			}
		}
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("| set | queries | all expected in top 5 | MRR |")
	t.Logf("|---|---|---|---|")
	for _, k := range keys {
		tl := per[k]
		t.Logf("| %s | %d | %.1f%% | %.3f |", k, tl.n, 100*tl.share(), tl.mrr())
	}
	// The goals over the whole development set: every expected name in the
	// top five for 95% of queries, and an MRR of 0.85. They are not reached
	// yet (see the table); the test fails below the figures measured when
	// it was written, so that no change makes ranking worse unnoticed, and
	// below the goals on relevance.jsonl, which ranking was designed on.
	total, first := per["all"], per["relevance.jsonl"]
	if total.share() < 0.95 || total.mrr() < 0.85 {
		t.Logf("goals not reached: top-5 share %.3f (goal 0.95), MRR %.3f (goal 0.85)", total.share(), total.mrr())
	}
	// A lookup's BM25 reading only the words not read as filters brought
	// both files from 89.1 % / 0.763 to 89.9 % / 0.772. Spells given the
	// classes their books name (most Deep Magic spells had none) took it
	// to 89.1 % / 0.770: "warlock cantrip that blasts someone with a stream
	// of cold beer" wants Ale-dritch Blast, a bard, druid and wizard
	// cantrip, and Deep Magic's warlock cantrips now rank above it, as the
	// understood class says they must. "One or two hands" read as the
	// versatile property (not two-handed), and the word "healing" kept in
	// BM25 beside its filter, brought it to 89.9 % / 0.777. SRD 5.1's texts
	// mended against its second transcription cost 0.001: Unseen Servant
	// pours wine now, not wind, and ranks above Detect Poison and Disease
	// for "is this wine poisoned?"; Zone of Truth reads as the SRD does
	// ("aware of the spell", not "aware of the fate ... his answers") and
	// no longer ranks for "make the tavern guard think I'm his old friend".
	// SRD 5.2's own
	// text (175 short rules, and paragraphs Open5e's spells lacked) moves
	// BM25's collection statistics, term rarities and the average length
	// texts are normalised by: Giant Spider passes Phase Spider, Jump passes
	// Chain Lightning ("lightning that jumps"), one place each, 89.9 % /
	// 0.766; the glossary's Long Rest, now first for "how long rests work"
	// (Open5e's Resting says the glossary has the rules), is expected there:
	// 0.76999.
	if total.share() < 0.898 || total.mrr() < 0.769 {
		t.Errorf("all: top-5 share %.3f, MRR %.3f; want at least 0.898 and 0.769 (goals 0.95 and 0.85)", total.share(), total.mrr())
	}
	// relevance.jsonl's MRR floor was 0.81 (0.820 measured on the whole
	// catalogue) until the core conditions were split per edition (issue
	// 28): "your speed becomes 0 because a creature is holding onto you"
	// finds SRD 5.1's Grappled second, behind Restrained, where the record
	// holding the three editions' texts together came first (0.809).
	// Questions read as filters (issue 27) bring it to 0.832, and BM25
	// without the filters' words to 0.838.
	if first.share() < 0.95 || first.mrr() < 0.83 {
		t.Errorf("relevance.jsonl: top-5 share %.3f, MRR %.3f; want at least 0.95 and 0.83", first.share(), first.mrr())
	}
}

// score says whether got has every expected name in its top five (one of
// the alternatives, if they are given) and every expect_above pair in
// order, and the reciprocal rank of the first expected name (of the best
// placed alternative).
func (c relevanceCase) score(got []string) (bool, float64) {
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
	if len(c.ExpectInTop5) > 0 {
		if p := pos(c.ExpectInTop5[0]); p >= 0 {
			rr = 1 / float64(p+1)
		}
	}
	if len(c.ExpectAnyInTop5) > 0 {
		best := -1
		for _, want := range c.ExpectAnyInTop5 {
			if p := pos(want); p >= 0 && (best < 0 || p < best) {
				best = p
			}
		}
		ok = ok && best >= 0 && best < 5
		if best >= 0 {
			rr = 1 / float64(best+1)
		}
	}
	return ok, rr
}

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/natsconsume"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorbundle"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// Findability through the MCP tools, as an assistant meets it: the whole
// snapshot in real Badger with the real model's vectors, the query service
// in process as `up` wires it, the MCP server, and the Go SDK client.

func TestFindability(t *testing.T) {
	cs := findSession(t)
	t.Run("one query path", func(t *testing.T) { checkOneQueryPath(t, cs) })
	t.Run("issue table", func(t *testing.T) { checkIssueTable(t, cs) })
	t.Run("README", func(t *testing.T) { checkREADME(t, cs) })
	t.Run("parts", func(t *testing.T) { checkParts(t, cs) })
}

// findSession connects a client to an MCP server over the whole snapshot
// with the real model's vectors (findNode's).
func findSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	svc, err := findNode.service(testModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(lkv1.NewQueryServiceClient(query.NewInProcessConn(svc, nil)), &mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connectSession(t, ct, nil)
}

// findNode is the snapshot stored with its vectors and the query service
// over it, opened once per test binary (storing and indexing the whole
// catalogue is most of what a test over it costs, the more so with the
// race detector) and closed by TestMain. Its tests only read it.
var findNode = &sharedNode{}

type sharedNode struct {
	once    sync.Once
	svc     *query.Service
	err     error
	closers []func()
}

func (n *sharedNode) service(modelDir string) (*query.Service, error) {
	n.once.Do(func() { n.svc, n.err = n.open(context.Background(), modelDir) })
	return n.svc, n.err
}

// close closes what open opened, last first.
func (n *sharedNode) close() {
	for _, c := range slices.Backward(n.closers) {
		c()
	}
}

// open stores the snapshot with its vectors in a temporary directory and
// returns the query service over it.
func (n *sharedNode) open(ctx context.Context, modelDir string) (*query.Service, error) {
	es, err := snapshotEntities()
	if err != nil {
		return nil, err
	}
	model, err := onnx.Open(modelDir, &onnx.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, func() { _ = model.Close() })
	info := model.Info()
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, func() { _ = idx.Close() })
	dir, err := os.MkdirTemp("", "lorekeeper-find-")
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, func() { _ = os.RemoveAll(dir) })
	st, err := badgerstore.Open(dir, idx, &badgerstore.Options{Model: info.Name})
	if err != nil {
		return nil, err
	}
	n.closers = append(n.closers, func() { _ = st.Close() })
	// The vectors as a node takes them: the bundled ones, the model's for
	// any text the bundle lacks.
	var embed natsconsume.Model = model
	if b, err := vectorbundle.Bundled(); err == nil {
		if ok, _ := b.Matches(info.Name, model.Checksum()); ok {
			embed = vectorbundle.NewModel(model, func() (*vectorbundle.Bundle, error) { return b, nil })
		}
	}
	for i := 0; i < len(es); i += 256 {
		part := es[i:min(i+256, len(es))]
		texts := make([]string, len(part))
		for j, e := range part {
			texts[j] = embedder.Text(e, info.Lowercase)
		}
		vecs, err := embed.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		ws := make([]badgerstore.Write, len(part))
		for j, e := range part {
			ws[j] = badgerstore.Write{Entity: e, Vector: vecs[j]}
		}
		if err := st.Apply(ctx, ws); err != nil {
			return nil, err
		}
	}
	if err := st.SetModel(ctx, info); err != nil {
		return nil, err
	}
	return query.NewService(st, model, nil), nil
}

// callFind calls a tool and decodes its structured result into out.
func callFind(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s(%v): %v %+v", tool, args, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String()
}

func resultNames(es []mcpserver.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// searchFirst is search_dnd_content's best result: the first of the
// first group.
func searchFirst(out mcpserver.SearchOutput) (mcpserver.Entity, bool) {
	if len(out.Groups) == 0 || len(out.Groups[0].Results) == 0 {
		return mcpserver.Entity{}, false
	}
	return out.Groups[0].Results[0], true
}

// checkOneQueryPath: the same misspelt words through
// search_dnd_content and through each lookup's semantic_query find the
// same entity first.
func checkOneQueryPath(t *testing.T, cs *mcp.ClientSession) {
	for _, c := range []struct{ tool, q, want string }{
		{"lookup_spell", "healin word", "Healing Word"},
		{"lookup_spell", "magic missle", "Magic Missile"},
		{"lookup_spell", "firbal", "Fireball"},
		{"lookup_creature", "owlbaer", "Owlbear"},
		{"lookup_creature", "gelatinus cube", "Gelatinous Cube"},
		{"lookup_equipment", "longsward", "Longsword"},
		{"lookup_equipment", "bag of holdin", "Bag of Holding"},
		{"lookup_character_option", "paladn", "Paladin"},
		{"lookup_rule", "grapled", "Grappled"},
		{"lookup_spell", "melfs acid arrow", "Acid Arrow"},
	} {
		t.Run(c.tool+" "+c.q, func(t *testing.T) {
			var s mcpserver.SearchOutput
			callFind(t, cs, "search_dnd_content", map[string]any{"query": c.q, "limit": 5}, &s)
			first, ok := searchFirst(s)
			if !ok || first.Name != c.want {
				t.Errorf("search_dnd_content(%q) first = %q, want %q", c.q, first.Name, c.want)
			}
			var l mcpserver.LookupOutput
			callFind(t, cs, c.tool, map[string]any{"semantic_query": c.q, "limit": 5}, &l)
			if len(l.Results) == 0 || l.Results[0].Name != c.want {
				t.Errorf("%s(semantic_query=%q) = %q, want %q first", c.tool, c.q, resultNames(l.Results), c.want)
			}
		})
	}
}

// checkIssueTable: the questions #27 found failing, through
// the MCP tools: what comes first, and what the structured result says was
// understood.
func checkIssueTable(t *testing.T, cs *mcp.ClientSession) {
	for _, c := range []struct {
		tool, q    string
		first      string // the first result's name
		understood map[string]any
	}{
		{"lookup_spell", "healin word", "Healing Word", nil},
		{"lookup_spell", "firbolt cantrip", "Fire Bolt", map[string]any{"level": 0.0}},
		{"lookup_equipment", "bow with the longest range", "Longbow", map[string]any{"order_by": "range", "descending": true}},
		{"lookup_equipment", "best medium armor that won't ruin my stealth rolls", "Breastplate",
			map[string]any{"armor_category": "medium", "category": "armor", "stealth_disadvantage": false, "order_by": "armor_class", "descending": true}},
	} {
		t.Run(c.q, func(t *testing.T) {
			var out mcpserver.LookupOutput
			text := callFind(t, cs, c.tool, map[string]any{"semantic_query": c.q, "limit": 5}, &out)
			if len(out.Results) == 0 || out.Results[0].Name != c.first {
				t.Errorf("%s(%q) = %q, want %s first", c.tool, c.q, resultNames(out.Results), c.first)
			}
			if !jsonEqual(out.Understood, c.understood) {
				t.Errorf("understood %v, want %v", out.Understood, c.understood)
			}
			if c.understood != nil && !strings.Contains(text, "Understood from the question") {
				t.Errorf("the text does not say what was understood:\n%s", text)
			}
		})
	}

	t.Run("one-handed weapon with reach", func(t *testing.T) {
		// The reach weapons not marked two-handed (the Whip, the Lance and
		// their magic versions) before the two-handed polearms that came
		// first before.
		var out mcpserver.LookupOutput
		callFind(t, cs, "lookup_equipment", map[string]any{"semantic_query": "one-handed weapon with reach", "limit": 10, "detail": "full"}, &out)
		if !jsonEqual(out.Understood, map[string]any{"not_property": "two-handed", "property": "reach", "category": "weapon"}) {
			t.Errorf("understood %v", out.Understood)
		}
		// The Whip among the ten, every result before it a reach weapon
		// not two-handed. (It was among the first five; the magic Lances
		// and Whips, whose texts now count by keyword too, rank above it.)
		whip := slices.IndexFunc(out.Results, func(e mcpserver.Entity) bool { return e.Name == "Whip" })
		if whip < 0 {
			t.Errorf("no Whip in %q", resultNames(out.Results))
		}
		for i, e := range out.Results[:max(whip, 0)] {
			if w := itemWeapon(e); w == nil || slices.Contains(w.Properties, "two-handed") || !slices.Contains(w.Properties, "reach") {
				t.Errorf("%s (%d) comes before the Whip", e.Name, i)
			}
		}
	})

	t.Run("CR 1/2 hyena-headed raiders", func(t *testing.T) {
		var out mcpserver.LookupOutput
		callFind(t, cs, "lookup_creature", map[string]any{"semantic_query": "CR 1/2 hyena-headed raiders who serve a demon lord of slaughter", "limit": 5, "detail": "full"}, &out)
		if !jsonEqual(out.Understood, map[string]any{"challenge_rating": 0.5}) {
			t.Errorf("understood %v, want challenge_rating 0.5", out.Understood)
		}
		// CR 1/2 creatures first (which of them is the model's to say: the
		// Gnoll is not among the first five yet).
		for _, e := range out.Results {
			if e.Creature == nil || e.Creature.ChallengeRating != 0.5 {
				t.Errorf("%s is not CR 1/2", e.Name)
			}
		}
	})

	t.Run("CR 5 undead from the SRD", func(t *testing.T) {
		var out mcpserver.SearchOutput
		text := callFind(t, cs, "search_dnd_content", map[string]any{"query": "CR 5 undead from the SRD", "limit": 5, "detail": "full"}, &out)
		if !jsonEqual(out.Understood, map[string]any{"challenge_rating": 5.0, "creature_type": "undead", "documents": []any{"srd-2014", "srd-2024"}}) {
			t.Errorf("understood %v", out.Understood)
		}
		if len(out.Groups) == 0 || out.Groups[0].EntityType != "creature" {
			t.Fatalf("first group is not creatures: %+v", out.Groups)
		}
		// Every CR 5 undead of the SRDs comes first, before anything else.
		srdCR5 := 0
		for _, e := range out.Groups[0].Results {
			if e.Creature == nil || e.Creature.ChallengeRating != 5 || e.Creature.Type != "undead" || !strings.HasPrefix(e.DocumentKey, "srd-") {
				break
			}
			srdCR5++
		}
		if srdCR5 == 0 {
			t.Errorf("first creatures %q: want the SRDs' CR 5 undead first", resultNames(out.Groups[0].Results))
		}
		if !strings.Contains(text, "challenge rating 5") {
			t.Errorf("the text does not say what was understood:\n%s", text)
		}
	})

	t.Run("can I cast two spells in one turn", func(t *testing.T) {
		// A question about how the game works asks for the rules, said
		// so in a few words rather than the eleven kinds.
		var out mcpserver.SearchOutput
		text := callFind(t, cs, "search_dnd_content", map[string]any{"query": "can I cast two spells in one turn", "limit": 3}, &out)
		var kinds []any
		for _, k := range lkv1.RuleKinds() {
			kinds = append(kinds, k.Slug())
		}
		if !jsonEqual(out.Understood, map[string]any{"entity_type": kinds}) {
			t.Errorf("understood %v, want the rules' kinds", out.Understood)
		}
		if len(out.Groups) == 0 || out.Groups[0].EntityType != "rule" || !slices.ContainsFunc(out.Groups[0].Results, func(e mcpserver.Entity) bool { return e.Name == "Bonus Action" }) {
			t.Errorf("first group %+v, want rules with Bonus Action", out.Groups[:min(1, len(out.Groups))])
		}
		if !strings.Contains(text, `entity type the rules (what lookup_rule serves) ("can i")`) {
			t.Errorf("the text does not say the rules were asked for:\n%s", text)
		}
	})

	t.Run("monsters with legendary actions CR 10 or lower", func(t *testing.T) {
		// "legendary actions" is a creature's, not an item's rarity;
		// "monsters" names the kind; "or lower" makes the CR a bound.
		var out mcpserver.SearchOutput
		text := callFind(t, cs, "search_dnd_content", map[string]any{"query": "monsters with legendary actions CR 10 or lower", "limit": 10, "detail": "full"}, &out)
		if !jsonEqual(out.Understood, map[string]any{"entity_type": "creature", "legendary": true, "cr_max": 10.0}) {
			t.Errorf("understood %v", out.Understood)
		}
		if len(out.Groups) == 0 || out.Groups[0].EntityType != "creature" {
			t.Fatalf("first group is not creatures: %+v", out.Groups)
		}
		for _, e := range out.Groups[0].Results {
			if !e.Creature.HasLegendaryActions || e.Creature.ChallengeRating > 10 {
				t.Errorf("%s (CR %v, legendary actions %v) does not match the question", e.Name, e.Creature.ChallengeRating, e.Creature.HasLegendaryActions)
			}
		}
		if !strings.Contains(text, "challenge rating at most 10") {
			t.Errorf("the text does not say the bound:\n%s", text)
		}
	})

	t.Run("dragon, walked with cursor", func(t *testing.T) {
		args := map[string]any{"query": "dragon", "limit": 10}
		var totals []uint64
		seen := 0
		for page := 0; ; page++ {
			if page == 50 {
				t.Fatal("over 50 pages")
			}
			var out mcpserver.SearchOutput
			callFind(t, cs, "search_dnd_content", args, &out)
			totals = append(totals, out.Total)
			seen += out.Count
			if out.NextCursor == "" {
				break
			}
			args["cursor"] = out.NextCursor
		}
		if len(totals) < 3 {
			t.Fatalf("%d pages, want several", len(totals))
		}
		for i, n := range totals {
			if n != uint64(seen) {
				t.Errorf("page %d: total %d; %d results over all %d pages", i+1, n, seen, len(totals))
			}
		}
	})
}

// checkREADME: the README's opening questions are answered as
// it promises.
func checkREADME(t *testing.T, cs *mcp.ClientSession) {
	var out mcpserver.SearchOutput
	callFind(t, cs, "search_dnd_content", map[string]any{"query": "what does Fireball do"}, &out)
	if first, _ := searchFirst(out); first.Name != "Fireball" || first.Kind != "spell" {
		t.Errorf("what does Fireball do: first %s %q", first.Kind, first.Name)
	}
	var spells mcpserver.LookupOutput
	callFind(t, cs, "lookup_spell", map[string]any{"semantic_query": "what does Fireball do", "limit": 3}, &spells)
	if len(spells.Results) == 0 || spells.Results[0].Name != "Fireball" {
		t.Errorf("lookup_spell(what does Fireball do) = %q", resultNames(spells.Results))
	}
}

// checkParts: a name that heads a part of a rule (or names a class's
// feature) answers with that part, from every book holding it, and not
// with the whole rule around it.
func checkParts(t *testing.T, cs *mcp.ClientSession) {
	for _, tt := range []struct {
		tool, name string
		docs       []string
		want       []string // in the text, in order
		not        string   // the text of the part after it
	}{
		// SRD 5.2's Rules Glossary has a Surprise of its own (an exact
		// name, TestMCP_srd52Rules): SRD 5.1's is a part.
		{"lookup_rule", "surprise", []string{"srd-2014"}, []string{"## Surprise\n*Part of Combat Sequence (rule section)*", "The GM determines who might be surprised"}, "Initiative determines the order of turns"},
		{"lookup_rule", "death saving throws", []string{"srd-2014"}, []string{"## Death Saving Throws\n*Part of Damage and Healing (rule section)*", "Rolling 1 or 20", "counts as two failures"}, "Stabilizing a Creature"},
		{"lookup_character_option", "sneak attack", nil, []string{"## Sneak Attack\n*Part of Rogue (class)*", "extra 1d6 damage"}, "Thieves' Cant"},
	} {
		args := map[string]any{"name": tt.name}
		if tt.docs != nil {
			args["documents"] = tt.docs
		}
		var out mcpserver.LookupOutput
		text := callFind(t, cs, tt.tool, args, &out)
		if out.NameMatch != "part" || out.Part != tt.name {
			t.Errorf("%s(%q): name_match %q, part %q; want part", tt.tool, tt.name, out.NameMatch, out.Part)
		}
		at := 0
		for _, w := range tt.want {
			i := strings.Index(text[at:], w)
			if i < 0 {
				t.Errorf("%s(%q): %q missing (or out of order) in\n%s", tt.tool, tt.name, w, text)
				break
			}
			at += i + len(w)
		}
		if strings.Contains(text, tt.not) {
			t.Errorf("%s(%q): the card holds %q, past the part:\n%s", tt.tool, tt.name, tt.not, text)
		}
		args["detail"] = "summary"
		if text := callFind(t, cs, tt.tool, args, &out); !strings.Contains(text, "it is a part of each result") {
			t.Errorf("%s(%q, summary): no word of the part:\n%s", tt.tool, tt.name, text)
		}
	}
}

// jsonEqual compares a decoded JSON object with want, as JSON.
func jsonEqual(got, want map[string]any) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return slices.Equal(xa, ya)
}

func itemWeapon(e mcpserver.Entity) *mcpserver.Weapon {
	if e.Item == nil {
		return nil
	}
	return e.Item.Weapon
}

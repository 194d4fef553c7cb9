package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// The MCP server over the whole bundled catalogue, as a user meets it:
// the real Badger store holding every snapshot entity, the real query
// service in process, the real MCP server and the SDK client. No model:
// these tests look names up, and what ranks by meaning falls back to
// keywords, as it does while a first start is embedding.

// catalogueSession connects the SDK client to an MCP server over the
// whole snapshot.
func catalogueSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	svc := query.NewService(snapshotStore(t), nil, &query.Options{Version: "test"})
	srv := mcpserver.New(lkv1.NewQueryServiceClient(query.NewInProcessConn(svc, nil)), &mcpserver.Options{Version: "test"})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connectSession(t, ct, nil)
}

// snapshotEntities is open5e.SnapshotEntities, read once per test binary:
// reading and normalising the whole pack is most of what a test over the
// catalogue costs. Callers must not modify the entities.
var snapshotEntities = sync.OnceValues(func() ([]*lkv1.Entity, error) {
	return open5e.SnapshotEntities(context.Background())
})

// snapshotCounts counts the snapshot's entities by "kind document".
func snapshotCounts(t *testing.T) map[string]int {
	t.Helper()
	es, err := snapshotEntities()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range es {
		out[e.GetKind().Slug()+" "+e.GetDocument().GetKey()]++
	}
	return out
}

func lookupOut(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) mcpserver.LookupOutput {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s(%v): %v %+v", tool, args, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out mcpserver.LookupOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// rpcCode is the JSON-RPC error code of err, 0 when it has none.
func rpcCode(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func getPrompt(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) (string, []*mcp.ResourceContents) {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("prompts/get %s %v: %v", name, args, err)
	}
	var text []string
	var embedded []*mcp.ResourceContents
	for _, m := range res.Messages {
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			text = append(text, c.Text)
		case *mcp.EmbeddedResource:
			embedded = append(embedded, c.Resource)
		}
	}
	return strings.Join(text, "\n"), embedded
}

func uris(rs []*mcp.ResourceContents) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URI)
	}
	return out
}

// TestMCP_editionsPromptsErrors runs each call of issue 28's table over
// the SDK client against the whole catalogue.
func TestMCP_editionsPromptsErrors(t *testing.T) {
	cs := catalogueSession(t)
	counts := snapshotCounts(t)

	t.Run("every document: prompts, completions, resources", func(t *testing.T) { checkEveryDocument(t, cs) })
	t.Run("plan_encounter's candidates", func(t *testing.T) { checkEncounterCandidates(t, cs) })

	t.Run("a rule by name in one edition", func(t *testing.T) {
		out := lookupOut(t, cs, "lookup_rule", map[string]any{"name": "exhaustion", "game_system": "2024", "detail": "full"})
		if out.Count != 1 || out.Results[0].DocumentKey != "srd-2024" || out.Results[0].Name != "Exhaustion" || out.Results[0].Kind != "condition" {
			t.Fatalf("lookup_rule(exhaustion, 2024) = %d results %+v; want SRD 5.2's Exhaustion (%s)", out.Count, out.Results, out.Message)
		}
		if !strings.Contains(out.Results[0].Description, "Exhaustion") || strings.Contains(out.Results[0].Description, "srd-2014") {
			t.Errorf("SRD 5.2 Exhaustion's text: %q", out.Results[0].Description)
		}
	})

	t.Run("an edition's conditions by document", func(t *testing.T) {
		want := counts["condition srd-2024"]
		out := lookupOut(t, cs, "lookup_rule", map[string]any{"rule_type": "condition", "documents": []string{"srd-2024"}, "limit": 100})
		if want == 0 || out.Count != want || len(out.Warnings) != 0 {
			t.Fatalf("srd-2024 conditions: %d, warnings %q; want the catalogue's %d and no warning", out.Count, out.Warnings, want)
		}
		for _, e := range out.Results {
			if e.DocumentKey != "srd-2024" {
				t.Errorf("%s from %s", e.Key, e.DocumentKey)
			}
		}
	})

	t.Run("each edition's condition, cited to its own book, A5E never first", func(t *testing.T) {
		out := lookupOut(t, cs, "lookup_rule", map[string]any{"rule_type": "condition", "name": "grappled"})
		// One result, the other editions its alternates (many books, one
		// name), each cited to its own book.
		var docs []string
		for _, e := range out.Results {
			docs = append(docs, e.DocumentKey)
			if e.Name != "Grappled" || strings.Count(e.Description, "Grappled") > 0 && strings.Contains(e.Description, "*a5e-ag:*") {
				t.Errorf("%s: %q", e.Key, e.Description)
			}
			for _, a := range e.Alternates {
				docs = append(docs, a.DocumentKey)
			}
		}
		if len(docs) != 3 || docs[0] == "a5e-ag" || !slices.Contains(docs, "srd-2014") || !slices.Contains(docs, "srd-2024") || !slices.Contains(docs, "a5e-ag") {
			t.Errorf("grappled from %v; want one per edition (srd-2014, srd-2024, a5e-ag), not A5E first", docs)
		}
		for _, gs := range []string{"5e-2014", "5e-2024"} {
			one := lookupOut(t, cs, "lookup_rule", map[string]any{"rule_type": "condition", "name": "grappled", "game_system": gs})
			if one.Count != 1 || one.Results[0].GameSystem != gs {
				t.Errorf("grappled in %s: %+v", gs, one.Results)
			}
		}
		// A 5e search puts an SRD copy first, the others as alternates.
		sr, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_dnd_content", Arguments: map[string]any{"query": "grappled", "entity_types": []string{"conditions"}, "semantic": false}})
		if err != nil || sr.IsError {
			t.Fatal(err, sr)
		}
		b, _ := json.Marshal(sr.StructuredContent)
		var so mcpserver.SearchOutput
		_ = json.Unmarshal(b, &so)
		if len(so.Groups) == 0 || len(so.Groups[0].Results) == 0 || so.Groups[0].Results[0].DocumentKey == "a5e-ag" {
			t.Errorf("search(grappled): %+v, want an SRD Grappled first", so.Groups)
		}
	})

	t.Run("documents warning only for a document that matches nothing", func(t *testing.T) {
		out := lookupOut(t, cs, "lookup_spell", map[string]any{"level": 9, "ritual": true, "documents": []string{"srd-2014"}})
		if out.Count != 0 || len(out.Warnings) != 0 {
			t.Errorf("9th-level rituals in srd-2014: %d, warnings %q; want none and no warning", out.Count, out.Warnings)
		}
		out = lookupOut(t, cs, "lookup_spell", map[string]any{"level": 9, "documents": []string{"srd-2014", "srd-2099"}})
		if out.Count == 0 || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "srd-2099") || strings.Contains(out.Warnings[0], `"srd-2014"`) {
			t.Errorf("with srd-2099: %d results, warnings %q; want srd-2014's and a warning naming srd-2099 alone", out.Count, out.Warnings)
		}
	})

	t.Run("compare_editions through the rename table", func(t *testing.T) {
		for _, tc := range []struct{ name, old, new string }{
			{"feeblemind", "open5e_v2:srd-2014:spell:feeblemind", "open5e_v2:srd-2024:spell:befuddlement"},
			{"Befuddlement", "open5e_v2:srd-2014:spell:feeblemind", "open5e_v2:srd-2024:spell:befuddlement"},
			{"Giant Poisonous Snake", "open5e_v2:srd-2014:creature:giant-poisonous-snake", "open5e_v2:srd-2024:creature:giant-venomous-snake"},
		} {
			text, emb := getPrompt(t, cs, "compare_editions", map[string]string{"name": tc.name})
			want := []string{lkv1.URIPrefix + tc.old, lkv1.URIPrefix + tc.new}
			if got := uris(emb); !slices.Equal(got, want) || !strings.Contains(text, "Renamed") || strings.Contains(text, "has none") {
				t.Errorf("compare_editions(%s) embeds %v, want %v, said renamed:\n%s", tc.name, got, want, text)
			}
		}
	})

	t.Run("compare_editions normalises values", func(t *testing.T) {
		text, emb := getPrompt(t, cs, "compare_editions", map[string]string{"name": "owlbear"})
		if len(emb) != 2 || strings.Contains(text, "- hit points:") {
			t.Errorf("compare_editions(owlbear): %d embedded; hit points listed as a difference:\n%s", len(emb), text)
		}
		_, emb = getPrompt(t, cs, "compare_editions", map[string]string{"name": "grappled", "edition": "a5e"})
		if got := uris(emb); len(got) != 2 || !strings.Contains(got[0], ":srd-2014:") || !strings.Contains(got[1], ":a5e-ag:") {
			t.Errorf("compare_editions(grappled, a5e) embeds %v, want SRD 5.1's and A5E's", got)
		}
		// Hit points as a stat block prints them, "7 (2d6)", not "7 2d6".
		text, _ = getPrompt(t, cs, "compare_editions", map[string]string{"name": "goblin"})
		if !regexp.MustCompile(`- hit points: \d+ \(\d+d\d+[^)]*\) → \d+ \(\d+d\d+[^)]*\)`).MatchString(text) {
			t.Errorf("compare_editions(goblin): hit points not as a stat block prints them:\n%s", text)
		}
	})

	t.Run("explain_rule per edition", func(t *testing.T) {
		_, emb := getPrompt(t, cs, "explain_rule", map[string]string{"topic": "grappled"})
		var docs []string
		for _, u := range uris(emb) {
			p, _ := lkv1.ParseEntityKey(strings.TrimPrefix(u, lkv1.URIPrefix))
			docs = append(docs, p.Document)
		}
		if !slices.Contains(docs, "srd-2014") || !slices.Contains(docs, "srd-2024") || slices.Contains(docs, "a5e-ag") {
			t.Errorf("explain_rule(grappled) embeds from %v; want both SRDs, no A5E", docs)
		}
		_, emb = getPrompt(t, cs, "explain_rule", map[string]string{"topic": "grappled", "edition": "2024"})
		for _, u := range uris(emb) {
			if !strings.Contains(u, ":srd-2024:") && !strings.Contains(u, ":core:") {
				t.Errorf("explain_rule(grappled, 2024) embeds %s", u)
			}
		}
	})

	t.Run("plan_encounter environments", func(t *testing.T) {
		var first []string
		for _, env := range []string{"forest", "Forest or Jungle", "forest-or-jungle"} {
			text, emb := getPrompt(t, cs, "plan_encounter", map[string]string{"party_levels": "3,3,4,5", "environment": env})
			got := uris(emb)
			if len(got) == 0 || strings.Contains(text, "none in the catalogue") {
				t.Fatalf("plan_encounter(forest as %q): nothing\n%s", env, text)
			}
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("environment %q gives %v, %q gave %v", env, got, "forest", first)
			}
			crs := map[string]bool{}
			for _, r := range emb {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.URI})
				if err != nil || len(res.Contents) != 2 {
					t.Fatalf("read %s: %v", r.URI, err)
				}
				var e mcpserver.Entity
				if err := json.Unmarshal([]byte(res.Contents[1].Text), &e); err != nil || e.Creature == nil {
					t.Fatalf("read %s: %v", r.URI, err)
				}
				if !slices.Contains(e.Creature.Environments, "forest-or-jungle") {
					t.Errorf("%s is found in %v, not in the forest", r.URI, e.Creature.Environments)
				}
				for _, line := range strings.Split(text, "\n") {
					if strings.Contains(line, r.URI) {
						crs[strings.SplitN(line, ",", 2)[0][strings.Index(line, "(CR"):]] = true
					}
				}
			}
			if len(crs) < 2 {
				t.Errorf("plan_encounter(%q): challenge ratings %v, want a mix", env, crs)
			}
			if !strings.Contains(text, "srd-2024") || !strings.Contains(text, "no environment data") {
				t.Errorf("plan_encounter(%q) does not say srd-2024 has no environment data:\n%s", env, text)
			}
		}
		text, emb := getPrompt(t, cs, "plan_encounter", map[string]string{"party_levels": "3,3,4,5", "environment": "forest", "documents": "srd-2024"})
		if len(emb) == 0 || !strings.Contains(text, "srd-2024 has no environment data") {
			t.Errorf("plan_encounter(forest, srd-2024): %d embedded\n%s\nwant SRD 5.2's creatures, said to be unfiltered", len(emb), text)
		}
		for _, u := range uris(emb) {
			if !strings.Contains(u, ":srd-2024:") {
				t.Errorf("plan_encounter(documents=srd-2024) embeds %s", u)
			}
		}
	})

	t.Run("invalid prompt arguments are -32602 with the message", func(t *testing.T) {
		for _, tc := range []struct {
			prompt string
			args   map[string]string
			want   string
		}{
			{"plan_encounter", map[string]string{"party_levels": "abc"}, `"abc" is not a level`},
			{"plan_encounter", map[string]string{"party_levels": "25"}, "level 25 is not in 1-20"},
			{"plan_encounter", map[string]string{}, "party_levels"},
			{"plan_encounter", map[string]string{"party_levels": "3", "environment": "the moon"}, "the environments are"},
			{"plan_encounter", map[string]string{"party_levels": "3", "creature_type": "robot"}, "robot"},
			{"compare_editions", map[string]string{"name": "beholder"}, "not open content"},
			{"compare_editions", map[string]string{"name": "fireball", "edition": "3.5"}, "unknown edition"},
			{"explain_rule", map[string]string{}, "topic"},
		} {
			_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tc.prompt, Arguments: tc.args})
			if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Errorf("%s %v: error %v (code %d), want -32602 saying %q", tc.prompt, tc.args, err, rpcCode(err), tc.want)
			}
		}
	})

	t.Run("unknown completion targets are errors", func(t *testing.T) {
		for _, tc := range []struct {
			ref  *mcp.CompleteReference
			arg  string
			want string
		}{
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "no_such_prompt"}, "name", `unknown prompt "no_such_prompt"`},
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "compare_editions"}, "colour", `has no argument "colour"`},
			{&mcp.CompleteReference{Type: "ref/resource", URI: "lorekeeper://spell/{key}"}, "key", "unknown resource template"},
		} {
			_, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: tc.ref, Argument: mcp.CompleteParamsArgument{Name: tc.arg, Value: "x"}})
			if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Errorf("complete %+v %s: %v (code %d), want -32602 saying %q", tc.ref, tc.arg, err, rpcCode(err), tc.want)
			}
		}
	})

	t.Run("completions offer only what the prompt accepts", func(t *testing.T) {
		for _, tc := range []struct{ prompt, arg, value, other string }{
			{"compare_editions", "name", "mag", "kind"},
			{"plan_encounter", "environment", "", "party_levels"},
			{"plan_encounter", "creature_type", "", "party_levels"},
			{"explain_rule", "topic", "gra", ""},
		} {
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: tc.prompt}, Argument: mcp.CompleteParamsArgument{Name: tc.arg, Value: tc.value}})
			if err != nil || len(res.Completion.Values) == 0 {
				t.Fatalf("complete %s.%s=%q: %v %+v", tc.prompt, tc.arg, tc.value, err, res)
			}
			for _, v := range res.Completion.Values {
				args := map[string]string{tc.arg: v}
				if tc.other == "party_levels" {
					args["party_levels"] = "5"
				}
				if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tc.prompt, Arguments: args}); err != nil {
					t.Errorf("completion %s.%s offers %q, which the prompt rejects: %v", tc.prompt, tc.arg, v, err)
				}
			}
		}
	})

	t.Run("a document's resource lists every entity, page by page", func(t *testing.T) {
		es, err := snapshotEntities()
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, e := range es {
			if e.GetDocument().GetKey() == "a5e-mm" && e.GetKey() != "" {
				keys[lkv1.EntityURI(e.GetKey())] = true
			}
		}
		got := map[string]bool{}
		uri := "lorekeeper://document/open5e_v2/a5e-mm"
		for pages := 0; uri != ""; pages++ {
			if pages > 10 {
				t.Fatal("over 10 pages")
			}
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(res.Contents) != 2 {
				t.Fatalf("read %s: %v", uri, err)
			}
			var page struct {
				Entities []struct{ URI string }
				Next     string
			}
			if err := json.Unmarshal([]byte(res.Contents[1].Text), &page); err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Entities {
				if !strings.Contains(res.Contents[0].Text, e.URI) {
					t.Errorf("%s: %s in the JSON, not the markdown", uri, e.URI)
				}
				got[e.URI] = true
			}
			uri = page.Next
		}
		for k := range keys {
			if !got[k] {
				t.Errorf("a5e-mm's %s is on no page of its resource", k)
			}
		}
		if len(got) != len(keys) {
			t.Errorf("the pages list %d entities, the document holds %d", len(got), len(keys))
		}
	})

	t.Run("reading an unknown resource", func(t *testing.T) {
		for _, tc := range []struct{ uri, nearest string }{
			{"lorekeeper://entity/open5e_v2:srd-2014:spell:firebal", "Fireball"},
			{"lorekeeper://entity/open5e_v2%3Asrd-2014%3Acreature%3Aowlbearr", "Owlbear"},
			{"lorekeeper://document/open5e_v2/srd-2099", ""},
		} {
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tc.uri})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != mcpserver.CodeResourceNotFound || !strings.Contains(je.Message, tc.uri) || !strings.Contains(je.Message, tc.nearest) {
				t.Errorf("read %s: %v, want -32002 with the URI as given and the nearest entity %q", tc.uri, err, tc.nearest)
				continue
			}
			var data struct{ URI, Nearest string }
			if err := json.Unmarshal(je.Data, &data); err != nil || data.URI != tc.uri || (tc.nearest != "") != (data.Nearest != "") {
				t.Errorf("read %s: data %s", tc.uri, je.Data)
			}
		}
	})

	// Issue 49, row 14: each of these was answered wrongly (error code 0,
	// accepted, no match, echoed raw, "the nearest entity is Ambush Chute").
	t.Run("edges of the requests", func(t *testing.T) {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "lorekeeper://entity/" + strings.Repeat("a", 1100)})
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), "at most 1024") {
			t.Errorf("read a 1,100-character key: %v (code %d), want -32602 saying the bound", err, rpcCode(err))
		}
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///etc/passwd"})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcpserver.CodeResourceNotFound || strings.Contains(je.Message, "nearest") || strings.Contains(string(je.Data), "nearest") {
			t.Errorf("read file:///etc/passwd: %v, want a plain -32002 naming no entity", err)
		}
		//nolint:staticcheck // logging/setLevel is still answered (deprecated by SEP-2577)
		if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "loud"}); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), "warning") {
			t.Errorf("setLevel loud: %v (code %d), want -32602 naming the levels", err, rpcCode(err))
		}
		//nolint:staticcheck // as above
		if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Errorf("setLevel warning: %v", err)
		}
		for _, name := range []string{"Ｆｉｒｅｂａｌｌ", "ﬁreball", "fire\u202eball"} {
			if out := lookupOut(t, cs, "lookup_spell", map[string]any{"name": name}); out.Count != 1 || out.Results[0].Name != "Fireball" {
				t.Errorf("lookup_spell %q: %d results %+v, want Fireball", name, out.Count, out.Results)
			}
		}
		out := lookupOut(t, cs, "lookup_spell", map[string]any{"name": "\u202eevil\u2066 name"})
		if out.Count != 0 || strings.ContainsAny(out.Message, "\u202e\u2066") || !strings.Contains(out.Message, "evil name") {
			t.Errorf("a name with bidi overrides is echoed as %q, want them taken out", out.Message)
		}
	})

	t.Run("a closed subclass points to its open counterpart", func(t *testing.T) {
		out := lookupOut(t, cs, "lookup_character_option", map[string]any{"type": "subclass", "name": "eldritch knight"})
		if out.Count != 0 || !strings.EqualFold(out.NotOpenContent, "Eldritch Knight") || len(out.Suggestions) == 0 || out.Suggestions[0].Name != "Arcane Warrior" || out.Suggestions[0].Via != "counterpart" {
			t.Fatalf("eldritch knight: %+v", out)
		}
		if !strings.Contains(out.Message, "not in any open-licensed document") || !strings.Contains(out.Message, "Arcane Warrior") {
			t.Errorf("message: %s", out.Message)
		}
		out = lookupOut(t, cs, "lookup_character_option", map[string]any{"type": "subclass", "name": "arcane trickster"})
		if len(out.Suggestions) == 0 || out.Suggestions[0].Name != "Eldritch Trickster" || out.Suggestions[0].Via != "counterpart" {
			t.Errorf("arcane trickster: %+v", out.Suggestions)
		}
	})
}

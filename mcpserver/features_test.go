package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// sessions are the transports every feature test runs over: the real SDK
// client over streamable HTTP and over stdio (the test binary re-executed
// as a server, see TestMain).
func sessions(t *testing.T) map[string]*mcp.ClientSession {
	t.Helper()
	h := newServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	return map[string]*mcp.ClientSession{
		"http":  connectHTTP(t, h.srv.HTTPHandler(nil), ""),
		"stdio": connect(t, &mcp.CommandTransport{Command: cmd}),
	}
}

// promptEmbeds gets a prompt and returns its text and embedded URIs, each
// checked to resolve with resources/read.
func promptEmbeds(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) (string, []string) {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var text strings.Builder
	var uris []string
	for _, m := range res.Messages {
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			text.WriteString(c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource.Text == "" || c.Resource.MIMEType != "text/markdown" {
				t.Errorf("%s: embedded %s has no markdown", name, c.Resource.URI)
			}
			uris = append(uris, c.Resource.URI)
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: c.Resource.URI})
			if err != nil || len(rr.Contents) == 0 {
				t.Errorf("%s: embedded %s does not resolve: %v", name, c.Resource.URI, err)
			}
		}
	}
	return text.String(), uris
}

func TestPrompts(t *testing.T) {
	for transport, cs := range sessions(t) {
		t.Run(transport, func(t *testing.T) {
			res, err := cs.ListPrompts(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string][]string{}
			for _, p := range res.Prompts {
				if p.Description == "" || p.Title == "" {
					t.Errorf("prompt %s lacks a title or description", p.Name)
				}
				for _, a := range p.Arguments {
					if a.Description == "" {
						t.Errorf("%s.%s has no description", p.Name, a.Name)
					}
					args[p.Name] = append(args[p.Name], a.Name)
				}
			}
			want := map[string][]string{
				"compare_editions":  {"name", "kind", "edition"},
				"plan_encounter":    {"party_levels", "difficulty", "creature_type", "environment", "documents"},
				"explain_rule":      {"topic", "edition"},
				"homebrew_overview": {"document"},
			}
			for name, w := range want {
				if !slices.Equal(args[name], w) {
					t.Errorf("%s arguments = %v, want %v", name, args[name], w)
				}
			}

			text, uris := promptEmbeds(t, cs, "compare_editions", map[string]string{"name": "fireball"})
			if !slices.Equal(uris, []string{"lorekeeper://entity/open5e_v2:srd-2014:spell:fireball"}) || !strings.Contains(text, "Only SRD 5.1") {
				t.Errorf("compare_editions(fireball): %v\n%s\nwant the 2014 Fireball alone, said so", uris, text)
			}

			text, uris = promptEmbeds(t, cs, "explain_rule", map[string]string{"topic": "grappled"})
			if !slices.Contains(uris, "lorekeeper://entity/open5e_v2:srd-2014:condition:grappled") || !strings.Contains(text, "only from these texts") {
				t.Errorf("explain_rule(grappled): %v\n%s", uris, text)
			}

			// One 1st-level character, moderate: 75 XP (SRD 5.2); the goblin
			// (CR 1/4, 50 XP) fits once, the dragon does not.
			text, uris = promptEmbeds(t, cs, "plan_encounter", map[string]string{"party_levels": "1"})
			if !slices.Equal(uris, []string{"lorekeeper://entity/open5e_v2:srd-2014:creature:goblin"}) {
				t.Errorf("plan_encounter(1) embeds %v, want the goblin alone", uris)
			}
			wantContains(t, text, "XP budget: 75 XP", "System Reference Document 5.2", "Goblin (CR 1/4, 50 XP, srd-2014): up to 1 within the budget")
			// A 2014 word is read as SRD 5.2's nearest, and said so: "hard"
			// is high, 100 XP for one 1st-level character.
			text, _ = promptEmbeds(t, cs, "plan_encounter", map[string]string{"party_levels": "1", "difficulty": "Hard"})
			wantContains(t, text, `Difficulty: "hard" read as SRD 5.2's high`, "a high combat encounter", "XP budget: 100 XP")

			text, uris = promptEmbeds(t, cs, "homebrew_overview", map[string]string{"document": "srd-2014"})
			if len(uris) < 3 || !strings.HasPrefix(uris[0], "lorekeeper://entity/open5e_v2:srd-2014:") {
				t.Errorf("homebrew_overview(srd-2014) embeds %v, want its first entities", uris)
			}
			// The overview names the document's resource, which lists
			// every entry.
			wantContains(t, text, "srd-2014", "lorekeeper://document/open5e_v2/srd-2014")

			for _, bad := range []struct {
				name string
				args map[string]string
				want string
			}{
				{"plan_encounter", map[string]string{"party_levels": "3,25"}, "not in 1-20"},
				{"plan_encounter", map[string]string{"party_levels": "3", "difficulty": "brutal"}, "use low, moderate or high (SRD 5.2's; easy, medium, hard and deadly are read as the nearest of them)"},
				{"compare_editions", map[string]string{"name": "fireball", "kind": "spaceship"}, "unknown kind"},
				{"homebrew_overview", map[string]string{"document": "nope"}, "no document"},
				// Not taken, so refused rather than dropped without a word.
				{"plan_encounter", map[string]string{"party_levels": "5,5", "theme": "undead crypt"},
					`invalid argument "theme": plan_encounter takes no such argument; its arguments: party_levels, difficulty, creature_type, environment, documents`},
				{"explain_rule", map[string]string{"topic": "prone", "Edition": "2024"}, `invalid argument "Edition"`},
			} {
				_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: bad.name, Arguments: bad.args})
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("%s(%v): err = %v, want %q", bad.name, bad.args, err, bad.want)
				}
			}
		})
	}
}

// The XP budget per character is SRD 5.2's table; spot checks of rows as
// published, and the shape every row must have.
func TestEncounterBudget(t *testing.T) {
	for _, tc := range []struct {
		levels     []int
		difficulty string
		want       int
	}{
		{[]int{1}, "low", 50},
		{[]int{1}, "moderate", 75},
		{[]int{1}, "high", 100},
		{[]int{5}, "moderate", 750},
		{[]int{3, 3, 3, 3}, "moderate", 900},
		{[]int{10}, "high", 3100},
		{[]int{20}, "low", 6400},
		{[]int{20}, "high", 22000},
		{[]int{4, 4, 5, 6}, "high", 3500},
	} {
		got, err := mcpserver.EncounterBudget(tc.levels, tc.difficulty)
		if err != nil || got != tc.want {
			t.Errorf("budget(%v, %s) = %d, %v; want %d", tc.levels, tc.difficulty, got, err, tc.want)
		}
	}
	prev := [3]int{}
	for l := 1; l <= 20; l++ {
		var row [3]int
		for i, d := range []string{"low", "moderate", "high"} {
			row[i], _ = mcpserver.EncounterBudget([]int{l}, d)
		}
		if row[0] >= row[1] || row[1] >= row[2] || row[0] <= prev[0] || row[1] <= prev[1] || row[2] <= prev[2] {
			t.Errorf("level %d: %v after %v; budgets must rise with difficulty and level", l, row, prev)
		}
		prev = row
	}
}

func TestCompletion(t *testing.T) {
	for transport, cs := range sessions(t) {
		t.Run(transport, func(t *testing.T) {
			complete := func(ref *mcp.CompleteReference, arg, value string, ctxArgs map[string]string) []string {
				t.Helper()
				p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
				if ctxArgs != nil {
					p.Context = &mcp.CompleteContext{Arguments: ctxArgs}
				}
				res, err := cs.Complete(context.Background(), p)
				if err != nil {
					t.Fatalf("complete %s=%q: %v", arg, value, err)
				}
				return res.Completion.Values
			}
			key := &mcp.CompleteReference{Type: "ref/resource", URI: mcpserver.EntityURITemplate}
			prompt := func(name string) *mcp.CompleteReference {
				return &mcp.CompleteReference{Type: "ref/prompt", Name: name}
			}
			for _, tc := range []struct {
				name string
				got  []string
				want []string
			}{
				{"key prefix", complete(key, "key", "open5e_v2:srd-2014:creature:g", nil), []string{"open5e_v2:srd-2014:creature:goblin"}},
				{"key by name", complete(key, "key", "gob", nil), []string{"open5e_v2:srd-2014:creature:goblin"}},
				{"entity name", complete(prompt("compare_editions"), "name", "fire", nil), []string{"Fireball"}},
				{"name within kind", complete(prompt("compare_editions"), "name", "g", map[string]string{"kind": "creature"}), []string{"Goblin"}},
				{"kind", complete(prompt("compare_editions"), "kind", "magic", nil), []string{"magic-item", "magic-school"}},
				{"difficulty", complete(prompt("plan_encounter"), "difficulty", "", nil), []string{"low", "moderate", "high"}},
				{"creature type", complete(prompt("plan_encounter"), "creature_type", "hum", nil), []string{"humanoid"}},
				{"document key", complete(prompt("homebrew_overview"), "document", "srd-20", nil), []string{"srd-2014", "srd-2024"}},
				{"document list", complete(prompt("plan_encounter"), "documents", "core,srd-202", nil), []string{"core,srd-2024"}},
				{"rule topic", complete(prompt("explain_rule"), "topic", "grap", nil), []string{"Grappled"}},
				{"no completion for levels", complete(prompt("plan_encounter"), "party_levels", "3", nil), []string{}},
			} {
				if !slices.Equal(tc.got, tc.want) {
					t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
				}
			}
		})
	}
}

func TestResourceLinksAndSummary(t *testing.T) {
	h := newHarness(t)
	full := h.call(t, "lookup_creature", map[string]any{"name": "*"})
	sum := h.call(t, "lookup_creature", map[string]any{"name": "*", "detail": "summary"})
	var fo, so mcpserver.LookupOutput
	for _, x := range []struct {
		res *mcp.CallToolResult
		out *mcpserver.LookupOutput
	}{{full, &fo}, {sum, &so}} {
		b, _ := json.Marshal(x.res.StructuredContent)
		if err := json.Unmarshal(b, x.out); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(o mcpserver.LookupOutput) (ks []string) {
		for _, e := range o.Results {
			ks = append(ks, e.Key)
		}
		return ks
	}
	if !slices.Equal(keys(fo), keys(so)) || len(fo.Results) != 2 {
		t.Fatalf("summary %v, full %v; want the same two creatures", keys(so), keys(fo))
	}
	for _, e := range so.Results {
		if e.Creature != nil || e.Description != "" || !strings.Contains(e.Summary, "AC ") || !strings.Contains(e.Summary, "CR ") {
			t.Errorf("summary entity %+v: want the key facts line only", e)
		}
	}
	wantContains(t, text(sum), "- **Goblin** — Small humanoid, CR 1/4 · AC 15 · HP 7")
	if strings.Contains(text(sum), "## Goblin") {
		t.Error("summary text holds a full card")
	}
	for _, res := range []*mcp.CallToolResult{full, sum, h.call(t, "search_dnd_content", map[string]any{"query": "goblin"})} {
		var links []string
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				if l.Name == "" || l.Title == "" || l.MIMEType != "text/markdown" {
					t.Errorf("link %+v lacks name, title or MIME type", l)
				}
				links = append(links, l.URI)
			}
		}
		if len(links) == 0 || !slices.Contains(links, "lorekeeper://entity/open5e_v2:srd-2014:creature:goblin") {
			t.Errorf("resource links %v, want the goblin's", links)
		}
	}
	bad := h.call(t, "lookup_spell", map[string]any{"detail": "short"})
	if !bad.IsError || !strings.Contains(text(bad), "full, summary") {
		t.Errorf("detail=short: %s; want an error naming full and summary", text(bad))
	}
	// The cursor goes through to the query service.
	h.call(t, "lookup_spell", map[string]any{"cursor": "abc"})
	if got := h.fake.last().(*lkv1.LookupSpellsRequest).GetCommon().GetCursor(); got != "abc" {
		t.Errorf("cursor sent = %q, want abc", got)
	}
}

// TestDocumentResources_changesHeld: while documents keep appearing (a
// first load storing book after book), the resource list changes (and
// sessions are notified) once per hold, not at every poll: a change
// within the hold of the last waits for a later poll, or for a client's
// resources/list, which always gets the list as it is.
func TestDocumentResources_changesHeld(t *testing.T) {
	h := newServer(t)
	ctx := context.Background()
	count := h.srv.DocumentResources
	const hold = time.Hour
	if err := h.srv.SyncDocuments(ctx, hold); err != nil {
		t.Fatal(err)
	}
	base := count()
	if base != len(h.fake.documents) || base == 0 {
		t.Fatalf("first sync: %d resources, want one per document (%d)", base, len(h.fake.documents))
	}
	brew := &lkv1.Document{Key: "my-brew", Name: "My Brew", Source: lkv1.Source_SOURCE_ORCBREW}
	h.fake.addEntity(&lkv1.Entity{Key: "orcbrew:my-brew:spell:zap", Slug: "zap", Name: "Zap", Kind: lkv1.Kind_KIND_SPELL, Document: brew,
		Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 1, School: "evocation"}}})
	if err := h.srv.SyncDocuments(ctx, hold); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != base {
		t.Errorf("a change within the hold of the last: %d resources, want the %d before", got, base)
	}
	if err := h.srv.SyncDocuments(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != base+1 {
		t.Errorf("past the hold: %d resources, want %d", got, base+1)
	}
}

func TestDocumentResources(t *testing.T) {
	h := newServer(t)
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.srv.WatchDocuments(ctx, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })

	list := func() []string {
		var uris []string
		for r, err := range cs.Resources(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		return uris
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notifications/resources/list_changed after %s", what)
		}
	}
	waitFor := func(want []string) {
		t.Helper()
		for i := 0; i < 200 && !slices.Equal(list(), want); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if got := list(); !slices.Equal(got, want) {
			t.Fatalf("resources = %v, want %v", got, want)
		}
	}
	var base []string // one resource per fixture document
	for _, d := range h.fake.documents {
		base = append(base, "lorekeeper://document/"+d.GetSource().Slug()+"/"+d.GetKey())
	}
	slices.Sort(base)
	if len(base) < 3 || !slices.Contains(base, "lorekeeper://document/open5e_v2/srd-2014") {
		t.Fatalf("fixture documents %v", base)
	}
	waitFor(base)

	// An import adds a homebrew book; deleting it removes it.
	brew := &lkv1.Document{Key: "my-brew", Name: "My Brew", Source: lkv1.Source_SOURCE_ORCBREW}
	h.fake.addEntity(&lkv1.Entity{Key: "orcbrew:my-brew:spell:zap", Slug: "zap", Name: "Zap", Kind: lkv1.Kind_KIND_SPELL, Document: brew,
		Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 1, School: "evocation"}}})
	wait("an import added a document")
	waitFor(append(slices.Clone(base), "lorekeeper://document/orcbrew/my-brew"))
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://document/orcbrew/my-brew"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 2 || !strings.Contains(res.Contents[0].Text, "- Zap · lorekeeper://entity/orcbrew:my-brew:spell:zap") || !strings.Contains(res.Contents[1].Text, `"kind": "spell"`) {
		t.Errorf("read my-brew = %+v", res.Contents)
	}
	h.fake.removeDocument("my-brew")
	wait("an import removed a document")
	waitFor(base)
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://document/orcbrew/my-brew"}); err == nil {
		t.Error("a removed document still reads")
	}
}

// resources/list pages with MCP cursors once there are more documents
// than a page holds.
func TestDocumentResources_Pages(t *testing.T) {
	h := newHarness(t)
	fixtures := len(h.fake.documents)
	for i := range mcpserver.PageSize + 5 {
		d := &lkv1.Document{Key: "brew-" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Name: "Brew", Source: lkv1.Source_SOURCE_ORCBREW}
		h.fake.addEntity(&lkv1.Entity{Key: "orcbrew:" + d.Key + ":feat:x", Name: "X", Kind: lkv1.Kind_KIND_FEAT, Document: d})
	}
	first, err := h.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Resources) != mcpserver.PageSize || first.NextCursor == "" {
		t.Fatalf("first page: %d resources, cursor %q; want %d and a cursor", len(first.Resources), first.NextCursor, mcpserver.PageSize)
	}
	second, err := h.cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(first.Resources) + len(second.Resources); n != mcpserver.PageSize+5+fixtures || second.NextCursor != "" {
		t.Errorf("two pages hold %d resources (cursor %q), want %d", n, second.NextCursor, mcpserver.PageSize+5+fixtures)
	}
}

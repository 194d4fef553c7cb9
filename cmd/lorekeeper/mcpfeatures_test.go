package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// The MCP features over the real stack: pages, summaries, resource links,
// documents as resources and their list_changed notification while an
// OrcBrew import runs, prompts with embedded content, completions.

const homebrewURI = mcpserver.DocumentURIPrefix + "orcbrew/test-content-pack"

func connectSession(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "lorekeeper-e2e", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// lookupPage calls lookup_spell and decodes its structured result.
func lookupPage(t *testing.T, cs *mcp.ClientSession, args map[string]any) (mcpserver.LookupOutput, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup_spell", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("lookup_spell(%v): %v %+v", args, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out mcpserver.LookupOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, res
}

// checkMCPFeatures runs over streamable HTTP against a stack whose
// OrcBrew folder is orcbrewDir and which holds the v2 spells.
func checkMCPFeatures(t *testing.T, mcpURL, orcbrewDir string) {
	changed := make(chan struct{}, 16)
	cs := connectSession(t, &mcp.StreamableClientTransport{Endpoint: mcpURL}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx := t.Context()

	t.Run("paged walk while an import runs", func(t *testing.T) {
		src, err := os.ReadFile("../../ingest/edn/testdata/orcbrew/lorekeeper-mcp_sample.orcbrew")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		cursor, pages := "", 0
		for ; pages < 20; pages++ {
			args := map[string]any{"documents": []string{"srd-2014"}, "limit": 50}
			if cursor != "" {
				args["cursor"] = cursor
			}
			out, _ := lookupPage(t, cs, args)
			for _, e := range out.Results {
				seen[e.Key]++
			}
			if pages == 0 {
				if out.Total != 319 {
					t.Errorf("total = %d, want 319", out.Total)
				}
				// The import runs between the first and second pages: the
				// walk goes on once the homebrew book is stored.
				if err := os.WriteFile(filepath.Join(orcbrewDir, "sample.orcbrew"), src, 0o644); err != nil {
					t.Fatal(err)
				}
				waitForHomebrew(t, cs)
			}
			if cursor = out.NextCursor; cursor == "" {
				break
			}
		}
		repeated := 0
		for _, n := range seen {
			if n > 1 {
				repeated++
			}
		}
		if len(seen) != 319 || repeated > 0 || pages != 6 {
			t.Errorf("walk: %d distinct spells, %d repeated, %d pages; want 319 once in 7 pages", len(seen), repeated, pages+1)
		}
	})

	t.Run("list_changed and documents as resources", func(t *testing.T) {
		select {
		case <-changed:
		case <-time.After(2 * time.Minute):
			t.Fatal("no notifications/resources/list_changed within 2 minutes of the import")
		}
		var uris []string
		deadline := time.Now().Add(time.Minute)
		for !slices.Contains(uris, homebrewURI) && time.Now().Before(deadline) {
			uris = uris[:0]
			for r, err := range cs.Resources(ctx, nil) { // follows MCP cursors
				if err != nil {
					t.Fatal(err)
				}
				uris = append(uris, r.URI)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !slices.Contains(uris, homebrewURI) || !slices.Contains(uris, mcpserver.DocumentURIPrefix+"open5e_v2/srd-2014") {
			t.Fatalf("resources = %v, want the SRD and %s", uris, homebrewURI)
		}
		// The document is listed once its first entities are stored; the
		// rest of the book may still be on its way through the stream.
		var (
			res *mcp.ReadResourceResult
			err error
		)
		listed := func() bool {
			return res != nil && len(res.Contents) == 2 && strings.Contains(res.Contents[0].Text, "Magic Missile") && res.Contents[1].MIMEType == "application/json"
		}
		for deadline := time.Now().Add(time.Minute); !listed() && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: homebrewURI}); err != nil {
				t.Fatal(err)
			}
		}
		if !listed() {
			var texts []string
			for _, c := range res.Contents {
				texts = append(texts, c.MIMEType+": "+c.Text)
			}
			t.Errorf("read %s = %q, want markdown listing Magic Missile and JSON", homebrewURI, texts)
		}
	})

	t.Run("summary returns the same entities as full", func(t *testing.T) {
		full, res := lookupPage(t, cs, map[string]any{"name": "fire*", "documents": []string{"srd-2014"}, "detail": "full"})
		sum, _ := lookupPage(t, cs, map[string]any{"name": "fire*", "documents": []string{"srd-2014"}, "detail": "summary"})
		keys := func(o mcpserver.LookupOutput) (ks []string) {
			for _, e := range o.Results {
				ks = append(ks, e.Key)
			}
			return ks
		}
		if !slices.Equal(keys(full), keys(sum)) || len(full.Results) < 3 {
			t.Errorf("summary keys %v, full keys %v; want the same (3+)", keys(sum), keys(full))
		}
		for _, e := range sum.Results {
			if e.Summary == "" || e.Spell != nil || e.Description != "" {
				t.Errorf("summary of %s: %+v; want a summary line and no card fields", e.Key, e)
			}
		}
		// Every result has a resource link that resources/read resolves.
		var links []*mcp.ResourceLink
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				links = append(links, l)
			}
		}
		if len(links) != len(full.Results) {
			t.Fatalf("%d resource links for %d results", len(links), len(full.Results))
		}
		for i, l := range links {
			if l.URI != full.Results[i].URI || l.MIMEType == "" || l.Title == "" {
				t.Errorf("link %d = %+v, want %s with title and MIME type", i, l, full.Results[i].URI)
			}
		}
		checkReadable(t, cs, links[0].URI, "Fire")
	})

	t.Run("prompts", func(t *testing.T) {
		var names []string
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		slices.Sort(names)
		if want := []string{"compare_editions", "explain_rule", "homebrew_overview", "plan_encounter"}; !slices.Equal(names, want) {
			t.Errorf("prompts = %v, want %v", names, want)
		}
		checkCompareEditions(t, cs)
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "homebrew_overview", Arguments: map[string]string{"document": "test-content-pack"}})
		if err != nil {
			t.Fatal(err)
		}
		// The book's entities embedded; the document's own resource (every
		// entity, a page at a time) is named in the text, not embedded.
		uris := embedded(t, res)
		if len(uris) < 3 || slices.Contains(uris, homebrewURI) || !strings.Contains(promptText(res), homebrewURI) {
			t.Fatalf("homebrew_overview embeds %v, want its entities, with %s named in the text", uris, homebrewURI)
		}
		for _, u := range uris {
			checkReadable(t, cs, u, "")
		}
	})

	t.Run("completions", func(t *testing.T) { checkCompletions(t, cs) })
}

// checkCompareEditions gets compare_editions(Fireball): both SRD
// Fireballs embedded, resolvable.
func checkCompareEditions(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "compare_editions", Arguments: map[string]string{"name": "fireball", "kind": "spell"}})
	if err != nil {
		t.Fatal(err)
	}
	uris := embedded(t, res)
	want := []string{"lorekeeper://entity/open5e_v2:srd-2014:spell:fireball", "lorekeeper://entity/open5e_v2:srd-2024:spell:fireball"}
	if !slices.Equal(uris, want) {
		t.Fatalf("compare_editions embeds %v, want %v", uris, want)
	}
	intro := res.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(intro, "SRD 5.1") || !strings.Contains(intro, "SRD 5.2") || !strings.Contains(intro, "→") {
		t.Errorf("compare_editions text lacks the editions or the differences:\n%s", intro)
	}
	for _, u := range uris {
		checkReadable(t, cs, u, "Fireball")
	}
}

func checkCompletions(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	complete := func(ref *mcp.CompleteReference, arg, value string) mcp.CompletionResultDetails {
		t.Helper()
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s=%q: %v", arg, value, err)
		}
		return res.Completion
	}
	key := &mcp.CompleteReference{Type: "ref/resource", URI: mcpserver.EntityURITemplate}
	if got := complete(key, "key", "open5e_v2:srd-2014:spell:fireb").Values; !slices.Contains(got, "open5e_v2:srd-2014:spell:fireball") || len(got) != 1 {
		t.Errorf("key prefix: %v, want only the SRD 5.1 Fireball's key", got)
	}
	if got := complete(key, "key", "fireball").Values; !slices.Contains(got, "open5e_v2:srd-2024:spell:fireball") {
		t.Errorf("key by name: %v, want the Fireballs' keys", got)
	}
	name := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "compare_editions"}, "name", "firebal")
	if len(name.Values) == 0 || name.Values[0] != "Fireball" {
		t.Errorf("name prefix: %v, want Fireball first", name.Values)
	}
	all := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "compare_editions"}, "name", "")
	if len(all.Values) != 100 || !all.HasMore || all.Total <= 100 {
		t.Errorf("empty prefix: %d values, hasMore %v, total %d; want 100 of more", len(all.Values), all.HasMore, all.Total)
	}
	docs := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "homebrew_overview"}, "document", "srd-20")
	if !slices.Contains(docs.Values, "srd-2014") || !slices.Contains(docs.Values, "srd-2024") {
		t.Errorf("document key: %v, want srd-2014 and srd-2024", docs.Values)
	}
}

// embedded returns the URIs of a prompt's embedded resources, checking
// each carries text.
func embedded(t *testing.T, res *mcp.GetPromptResult) []string {
	t.Helper()
	var uris []string
	for _, m := range res.Messages {
		if er, ok := m.Content.(*mcp.EmbeddedResource); ok {
			if er.Resource == nil || er.Resource.Text == "" {
				t.Errorf("empty embedded resource %+v", er)
				continue
			}
			uris = append(uris, er.Resource.URI)
		}
	}
	return uris
}

func checkReadable(t *testing.T, cs *mcp.ClientSession, uri, contains string) {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Errorf("resources/read %s: %v", uri, err)
		return
	}
	if len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, contains) {
		t.Errorf("resources/read %s: %+v, want text with %q", uri, res.Contents, contains)
	}
}

// waitForHomebrew waits until list_documents shows the sample's book.
func waitForHomebrew(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{"source": "orcbrew"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if strings.Contains(string(b), `"test-content-pack"`) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the OrcBrew sample was not imported within 2 minutes")
}

// promptText is a prompt's text messages, joined.
func promptText(res *mcp.GetPromptResult) string {
	var b strings.Builder
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkingest "lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestMCP_srd52Rules runs the calls of issue 46's table over the SDK
// client against the whole catalogue: SRD 5.2's Rules Glossary found by
// name and linked by its See also, explain_rule embedding what the text
// links and nothing that only resembles a topic, and an edition asked for
// answered or said to be fallen back from.
func TestMCP_srd52Rules(t *testing.T) {
	cs := catalogueSession(t)

	t.Run("the glossary's rules by name, with their links", func(t *testing.T) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup_rule", Arguments: map[string]any{"name": "unarmed strike*", "game_system": "2024"}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		md, links := textAndLinks(res)
		if !strings.Contains(md, "## Unarmed Strike") || !strings.Contains(md, "8 plus your Strength modifier and Proficiency Bonus") ||
			!strings.Contains(md, "*See also: Grappling (lorekeeper://entity/srd_text:srd-2024:rule:grappling).*") {
			t.Errorf("lookup_rule(unarmed strike*, 2024):\n%s", md)
		}
		if !slices.Contains(links, "lorekeeper://entity/srd_text:srd-2024:rule:grappling") {
			t.Errorf("resource links %q lack the See also's Grappling", links)
		}
		for _, tc := range []struct {
			name string
			want []string
		}{
			{"*jump*", []string{"High Jump", "Jumping", "Long Jump"}},
			{"opportunity attack*", []string{"Opportunity Attacks"}},
			{"grappled condition", []string{"Grappled"}},
		} {
			out := lookupOut(t, cs, "lookup_rule", map[string]any{"name": tc.name, "game_system": "2024"})
			var got []string
			for _, e := range out.Results {
				got = append(got, e.Name)
				if e.DocumentKey != srd52.DocumentKey {
					t.Errorf("lookup_rule(%s, 2024): %s from %s", tc.name, e.Key, e.DocumentKey)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lookup_rule(%s, 2024) = %q, want %q", tc.name, got, tc.want)
			}
		}
	})

	t.Run("every glossary entry by its name, tagged or not, whole", func(t *testing.T) {
		b, err := srd52.Open()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range b.Glossary {
			names := []string{g.Name}
			if g.Tag != "" {
				names = append(names, g.Name+" ["+g.Tag+"]")
			}
			for _, name := range names {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup_rule", Arguments: map[string]any{"name": name, "game_system": "2024"}})
				if err != nil || res.IsError {
					t.Fatal(err, res)
				}
				md, _ := textAndLinks(res)
				_, first, _ := strings.Cut(md, "\n## ")
				first, _, _ = strings.Cut(first, "\n---")
				card := lkingest.Words(first)
				if heading, _, _ := strings.Cut(first, "\n"); !strings.EqualFold(heading, g.Name) {
					t.Errorf("lookup_rule(%q, 2024): the first card is not %s's:\n%.300s", name, g.Name, md)
					continue
				}
				// Every paragraph, by its opening words: Open5e's copies
				// of the conditions word the odd sentence differently.
				for _, p := range strings.Split(g.Text, "\n\n") {
					w := strings.Fields(lkingest.Words(p))
					if len(w) > 0 && !strings.Contains(card, " "+strings.Join(w[:min(len(w), 8)], " ")+" ") {
						t.Errorf("lookup_rule(%q, 2024): the card lacks the glossary's %q", name, p)
					}
				}
			}
		}
		t.Logf("%d glossary entries looked up", len(b.Glossary))
	})

	t.Run("explain_rule embeds the rule and what it links", func(t *testing.T) {
		text, emb := getPrompt(t, cs, "explain_rule", map[string]string{"topic": "grappling", "edition": "2024"})
		want := []string{"srd_text:srd-2024:rule:grappling", "srd_text:srd-2024:rule:unarmed-strike", "open5e_v2:srd-2024:condition:grappled"}
		var got []string
		for _, u := range uris(emb) {
			got = append(got, lkv1.KeyFromURI(u))
		}
		if !slices.Equal(got, want) || strings.Contains(text, "has no rule") {
			t.Errorf("explain_rule(grappling, 2024) embeds %q, want %q:\n%s", got, want, text)
		}
	})

	t.Run("a topic no open book has", func(t *testing.T) {
		text, emb := getPrompt(t, cs, "explain_rule", map[string]string{"topic": "flanking"})
		if len(emb) != 0 || !strings.Contains(text, `There is no rule named "flanking" in the open content`) || !strings.Contains(text, "The nearest names are: ") {
			t.Errorf("explain_rule(flanking) embeds %q:\n%s", uris(emb), text)
		}
		out := lookupOut(t, cs, "lookup_rule", map[string]any{"name": "flanking"})
		if out.Count != 0 || !strings.Contains(out.Message, "No rule named 'flanking' in the open content") || len(out.Suggestions) == 0 {
			t.Errorf("lookup_rule(flanking): %d results, %q, %d suggestions", out.Count, out.Message, len(out.Suggestions))
		}
	})

	t.Run("an edition that lacks the rule says so and falls back", func(t *testing.T) {
		text, emb := getPrompt(t, cs, "explain_rule", map[string]string{"topic": "bloodied", "edition": "2014"})
		if got := uris(emb); len(got) == 0 || !strings.Contains(got[0], ":srd-2024:") ||
			!strings.Contains(text, `SRD 5.1 (2014 rules) has no rule on "bloodied"; the entries below are from SRD 5.2 (2024 rules) instead`) {
			t.Errorf("explain_rule(bloodied, 2014) embeds %q:\n%s", got, text)
		}
		out := lookupOut(t, cs, "lookup_rule", map[string]any{"name": "bloodied", "game_system": "2014"})
		if out.Count == 0 || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "No rule named 'bloodied' in 2014; these are from 5e-2024") {
			t.Errorf("lookup_rule(bloodied, 2014): %d results, warnings %q", out.Count, out.Warnings)
		}
		for _, e := range out.Results {
			if e.GameSystem == "5e-2014" {
				t.Errorf("lookup_rule(bloodied, 2014) fell back to %s, of the edition asked", e.Key)
			}
		}
	})

	t.Run("a spell's casting time from the text, footnoted", func(t *testing.T) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup_spell", Arguments: map[string]any{"name": "divine smite", "documents": []string{"srd-2024"}}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		md, _ := textAndLinks(res)
		for _, want := range []string{
			"**Casting Time:** 1 bonus action",
			"**Trigger:** which you take immediately after hitting a target with a Melee weapon or an Unarmed Strike",
			"*From the SRD 5.2 text (this record lacked or misstated it): casting time condition which you take immediately after",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("Divine Smite's card lacks %q:\n%s", want, md)
			}
		}
	})

	t.Run("list_documents shows the text with its notice", func(t *testing.T) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{"source": "srd_text"}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		md, _ := textAndLinks(res)
		if !strings.Contains(md, "srd-2024") || !strings.Contains(md, "srd_text") || !strings.Contains(md, "This work includes material from the System Reference Document 5.2") ||
			!strings.Contains(md, "CC-BY-4.0") {
			t.Errorf("list_documents(srd_text):\n%s", md)
		}
	})
}

// textAndLinks is a tool result's text and the URIs of its resource links.
func textAndLinks(res *mcp.CallToolResult) (string, []string) {
	var text, links []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text = append(text, c.Text)
		case *mcp.ResourceLink:
			links = append(links, c.URI)
		}
	}
	return strings.Join(text, "\n"), links
}

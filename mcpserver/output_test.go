package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// fullSchema is the schema of T with every nested type spelled out (the
// advertised output schemas leave out the entities' properties).
func fullSchema[T any](t *testing.T) *jsonschema.Resolved {
	t.Helper()
	s, err := jsonschema.For[T](nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTools_OutputMatchesSchema: each tool's structured output validates
// against the output schema the tool advertises and against the full
// schema of its Go type. The server encodes outputs without validating
// them on each call; this is where they are checked.
func TestTools_OutputMatchesSchema(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	list, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	advertised := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		js, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(js, &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		if advertised[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
	}
	lookup, search, docs := fullSchema[mcpserver.LookupOutput](t), fullSchema[mcpserver.SearchOutput](t), fullSchema[mcpserver.DocumentsOutput](t)
	tests := []struct {
		name string
		tool string
		args map[string]any
		full *jsonschema.Resolved
	}{
		{"spell", "lookup_spell", map[string]any{"name": "fireball"}, lookup},
		{"creature", "lookup_creature", map[string]any{"name": "adult red dragon"}, lookup},
		{"weapon", "lookup_equipment", map[string]any{"name": "longsword"}, lookup},
		{"magic item", "lookup_equipment", map[string]any{"name": "bag of holding"}, lookup},
		{"class", "lookup_character_option", map[string]any{"name": "wizard"}, lookup},
		{"condition", "lookup_rule", map[string]any{"name": "grappled"}, lookup},
		{"no match", "lookup_spell", map[string]any{"name": "no such spell"}, lookup},
		{"search", "search_dnd_content", map[string]any{"query": "fire"}, search},
		{"search, nothing", "search_dnd_content", map[string]any{"query": "zzzzqqq"}, search},
		{"documents json", "list_documents", map[string]any{}, docs},
		{"documents text", "list_documents", map[string]any{"format": "text"}, docs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil || res.IsError {
				t.Fatalf("%v %v", err, res)
			}
			if res.StructuredContent == nil || len(res.Content) == 0 {
				t.Fatalf("structured %v, content %v; want both", res.StructuredContent, res.Content)
			}
			v := res.StructuredContent
			if err := advertised[tt.tool].Validate(&v); err != nil {
				t.Errorf("against the advertised schema: %v", err)
			}
			if err := tt.full.Validate(&v); err != nil {
				t.Errorf("against the full schema: %v", err)
			}
		})
	}
}

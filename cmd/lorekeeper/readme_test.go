package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docExample is one JSON example of the README or a docs/ page: the request,
// and the answer shown after "→" when there is one.
type docExample struct {
	file, request, answer string
}

// docFiles are the pages whose examples TestDocs_MCPExamples runs: the
// README and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages in docs/")
	}
	return append([]string{"../../README.md"}, pages...)
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// docExamples returns the JSON examples of the given pages that are MCP
// requests or resource links; a client configuration ({"mcpServers": ...})
// is not one.
func docExamples(t *testing.T, files []string) []docExample {
	t.Helper()
	var out []docExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range jsonBlock.FindAllStringSubmatch(string(b), -1) {
			req, ans, _ := strings.Cut(m[1], "→")
			req = strings.TrimSpace(req)
			if isClientConfig(req) {
				continue
			}
			out = append(out, docExample{filepath.Base(f), req, strings.TrimSpace(ans)})
		}
	}
	return out
}

// isClientConfig tells a client's configuration file from a request.
func isClientConfig(s string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return false
	}
	_, desktop := m["mcpServers"]
	_, vscode := m["servers"]
	return desktop || vscode
}

// TestDocs_MCPExamples sends every JSON example of the README and of docs/
// through the SDK client to the server over the whole catalogue, and fails
// on an error or an empty answer, or an answer without what the page shows
// after "→": a page cannot promise what the server does not do.
func TestDocs_MCPExamples(t *testing.T) {
	examples := docExamples(t, docFiles(t))
	if len(examples) == 0 {
		t.Fatal("no JSON examples in the README or docs/")
	}
	// With the model, as a user meets them: a semantic example ranks by
	// meaning, not by the keywords it falls back to without one.
	cs := findSession(t)
	for i, ex := range examples {
		t.Run(fmt.Sprintf("%s#%d", ex.file, i+1), func(t *testing.T) {
			t.Logf("%s", ex.request)
			got, err := runDocExample(t, cs, ex.request)
			if err != nil {
				t.Fatal(err)
			}
			if ex.answer == "" {
				return
			}
			var want any
			if err := json.Unmarshal([]byte(strings.ReplaceAll(ex.answer, "[...]", "[]")), &want); err != nil {
				t.Fatalf("the answer shown is not JSON: %v\n%s", err, ex.answer)
			}
			if err := shows(got, want, ""); err != nil {
				b, _ := json.Marshal(got)
				t.Errorf("the page shows %s, but %v\nanswer: %.2000s", ex.answer, err, b)
			}
		})
	}
}

// runDocExample sends one example and returns its answer as JSON values:
// a tool's structured content, a prompt's or a resource's result.
func runDocExample(t *testing.T, cs *mcp.ClientSession, raw string) (any, error) {
	t.Helper()
	var ex struct {
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params"`
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		Type      string          `json:"type"`
		URI       string          `json:"uri"`
		Title     string          `json:"title"`
	}
	if err := json.Unmarshal([]byte(raw), &ex); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	ctx := t.Context()
	switch {
	case ex.Method == "prompts/get":
		var p mcp.GetPromptParams
		if err := json.Unmarshal(ex.Params, &p); err != nil {
			return nil, err
		}
		res, err := cs.GetPrompt(ctx, &p)
		if err != nil {
			return nil, err
		}
		embedded := 0
		for _, m := range res.Messages {
			if _, ok := m.Content.(*mcp.EmbeddedResource); ok {
				embedded++
			}
		}
		if embedded == 0 {
			return nil, fmt.Errorf("the prompt embeds nothing:\n%s", res.Messages[0].Content.(*mcp.TextContent).Text)
		}
		return asJSON(res)
	case ex.Method == "completion/complete":
		var p mcp.CompleteParams
		if err := json.Unmarshal(ex.Params, &p); err != nil {
			return nil, err
		}
		res, err := cs.Complete(ctx, &p)
		if err != nil {
			return nil, err
		}
		if len(res.Completion.Values) == 0 {
			return nil, fmt.Errorf("no completion values")
		}
		return asJSON(res)
	case ex.Method == "resources/read", ex.Type == "resource_link":
		uri := ex.URI
		if ex.Method != "" {
			var p mcp.ReadResourceParams
			if err := json.Unmarshal(ex.Params, &p); err != nil {
				return nil, err
			}
			uri = p.URI
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", uri, err)
		}
		if len(res.Contents) == 0 || res.Contents[0].Text == "" {
			return nil, fmt.Errorf("read %s: empty", uri)
		}
		if name, _, _ := strings.Cut(ex.Title, " ("); name != "" && !strings.Contains(res.Contents[0].Text, name) {
			return nil, fmt.Errorf("%s reads without %q", uri, name)
		}
		return asJSON(res)
	case ex.Method == "tools/call", ex.Name != "" && ex.Arguments != nil:
		p := mcp.CallToolParams{Name: ex.Name, Arguments: ex.Arguments}
		if ex.Method != "" {
			if err := json.Unmarshal(ex.Params, &p); err != nil {
				return nil, err
			}
		}
		res, err := cs.CallTool(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("tool error: %s", toolText(res))
		}
		got, err := asJSON(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		if m, _ := got.(map[string]any); m["count"] == float64(0) && m["total"] == float64(0) {
			return nil, fmt.Errorf("empty answer: %s", toolText(res))
		}
		return got, nil
	}
	return nil, fmt.Errorf("neither a request this test sends nor a resource link")
}

func asJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// shows reports whether got shows everything want does: an object each of
// want's keys, with what want shows under it; an array want's elements, in
// order, among its own (a page shows the first results, or the ones it
// speaks of); a string ending in "..." a prefix; anything else equality.
func shows(got, want any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %T, not an object", path, got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s has no %q", path, k)
			}
			if err := shows(gv, wv, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s is %T, not an array", path, got)
		}
		j := 0
		for i, wv := range w {
			for j < len(g) && shows(g[j], wv, "") != nil {
				j++
			}
			if j == len(g) {
				return fmt.Errorf("%s[%d] (%v) is not there, in order", path, i, wv)
			}
			j++
		}
		return nil
	case string:
		g, ok := got.(string)
		if prefix, cut := strings.CutSuffix(w, "..."); cut && ok && strings.HasPrefix(g, prefix) {
			return nil
		}
		if !ok || g != w {
			return fmt.Errorf("%s is %v, not %q", path, got, w)
		}
		return nil
	default:
		if got != want {
			return fmt.Errorf("%s is %v, not %v", path, got, want)
		}
		return nil
	}
}

func TestShows(t *testing.T) {
	got := map[string]any{
		"total":       float64(319),
		"next_cursor": "eyJ2IjoxLCJxIjoiabc",
		"results":     []any{map[string]any{"name": "A", "level": float64(1)}, map[string]any{"name": "B"}, map[string]any{"name": "C"}},
	}
	tests := []struct {
		name string
		want string
		ok   bool
	}{
		{"equal number", `{"total": 319}`, true},
		{"other number", `{"total": 318}`, false},
		{"prefix", `{"next_cursor": "eyJ2Ijox..."}`, true},
		{"not a prefix", `{"next_cursor": "eyJ3..."}`, false},
		{"missing key", `{"count": 1}`, false},
		{"results in order", `{"results": [{"name": "A"}, {"name": "C"}]}`, true},
		{"results out of order", `{"results": [{"name": "C"}, {"name": "A"}]}`, false},
		{"a result's field", `{"results": [{"name": "A", "level": 2}]}`, false},
		{"no such result", `{"results": [{"name": "D"}]}`, false},
		{"empty array", `{"results": []}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := shows(got, want, ""); (err == nil) != tt.ok {
				t.Errorf("shows(%s) = %v, want ok=%v", tt.want, err, tt.ok)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readmeMCPExamples returns the JSON examples of the README's section on
// what the MCP server offers: each the request, and the answer shown after
// "→" when there is one.
func readmeMCPExamples(t *testing.T) (requests, answers []string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### What the MCP server offers")
	if start < 0 {
		t.Fatal("README has no section \"What the MCP server offers\"")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n### "); end >= 0 {
		section = section[:end+3]
	}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1) {
		req, ans, _ := strings.Cut(m[1], "→")
		requests = append(requests, strings.TrimSpace(req))
		answers = append(answers, strings.TrimSpace(ans))
	}
	return requests, answers
}

// TestREADME_MCPExamples sends every JSON example of the README's MCP
// section through the SDK client to the server over the whole catalogue,
// and fails on an error or an empty answer, or an answer without the values
// the README shows: the README cannot promise what the server does not do.
func TestREADME_MCPExamples(t *testing.T) {
	requests, answers := readmeMCPExamples(t)
	if len(requests) == 0 {
		t.Fatal("no JSON examples in the README's MCP section")
	}
	cs := catalogueSession(t)
	for i, raw := range requests {
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
			t.Errorf("README example %d is not JSON: %v\n%s", i+1, err, raw)
			continue
		}
		t.Logf("example %d: %s", i+1, raw)
		switch {
		case ex.Method == "prompts/get":
			var p mcp.GetPromptParams
			if err := json.Unmarshal(ex.Params, &p); err != nil {
				t.Fatal(err)
			}
			res, err := cs.GetPrompt(t.Context(), &p)
			if err != nil {
				t.Errorf("example %d: %v", i+1, err)
				continue
			}
			embedded := 0
			for _, m := range res.Messages {
				if _, ok := m.Content.(*mcp.EmbeddedResource); ok {
					embedded++
				}
			}
			if embedded == 0 || strings.Contains(res.Messages[0].Content.(*mcp.TextContent).Text, "- none") {
				t.Errorf("example %d embeds nothing:\n%s", i+1, res.Messages[0].Content.(*mcp.TextContent).Text)
			}
		case ex.Method == "completion/complete":
			var p mcp.CompleteParams
			if err := json.Unmarshal(ex.Params, &p); err != nil {
				t.Fatal(err)
			}
			res, err := cs.Complete(t.Context(), &p)
			if err != nil || len(res.Completion.Values) == 0 {
				t.Errorf("example %d: %v %+v", i+1, err, res)
				continue
			}
			if answers[i] != "" {
				var want mcp.CompleteResult
				if err := json.Unmarshal([]byte(answers[i]), &want); err != nil {
					t.Fatalf("example %d's answer: %v", i+1, err)
				}
				for _, v := range want.Completion.Values {
					if !slices.Contains(res.Completion.Values, v) {
						t.Errorf("example %d: values %v, the README shows %q", i+1, res.Completion.Values, v)
					}
				}
			}
		case ex.Method == "resources/read", ex.Type == "resource_link":
			uri := ex.URI
			if ex.Method != "" {
				var p mcp.ReadResourceParams
				if err := json.Unmarshal(ex.Params, &p); err != nil {
					t.Fatal(err)
				}
				uri = p.URI
			}
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(res.Contents) == 0 || res.Contents[0].Text == "" {
				t.Errorf("example %d: read %s: %v", i+1, uri, err)
				continue
			}
			if name, _, _ := strings.Cut(ex.Title, " ("); name != "" && !strings.Contains(res.Contents[0].Text, name) {
				t.Errorf("example %d: %s reads without %q", i+1, uri, name)
			}
		case ex.Method == "tools/call", ex.Name != "" && ex.Arguments != nil:
			p := mcp.CallToolParams{Name: ex.Name, Arguments: ex.Arguments}
			if ex.Method != "" {
				if err := json.Unmarshal(ex.Params, &p); err != nil {
					t.Fatal(err)
				}
			}
			res, err := cs.CallTool(t.Context(), &p)
			if err != nil || res.IsError {
				t.Errorf("example %d: %v %+v", i+1, err, res)
				continue
			}
			b, _ := json.Marshal(res.StructuredContent)
			var out struct {
				Count, Total int
				NextCursor   string `json:"next_cursor"`
			}
			if err := json.Unmarshal(b, &out); err != nil || out.Count == 0 && out.Total == 0 {
				t.Errorf("example %d: empty answer %s", i+1, b)
				continue
			}
			if strings.Contains(answers[i], `"next_cursor"`) && out.NextCursor == "" {
				t.Errorf("example %d: no next_cursor, the README shows one", i+1)
			}
			var shown map[string]any
			if answers[i] != "" && json.Unmarshal([]byte(strings.ReplaceAll(answers[i], "[...]", "[]")), &shown) == nil {
				if n, ok := shown["total"].(float64); ok && int(n) != out.Total {
					t.Errorf("example %d: total %d, the README shows %v", i+1, out.Total, n)
				}
			}
		default:
			t.Errorf("README example %d is neither a request this test sends nor a resource link: %s", i+1, raw)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// answerBudgets are the sizes an assistant can hold (README, "Answer
// sizes"): the text and the structured content of a call's answer, each in
// bytes, with the defaults an assistant uses. Before issue #26 the dragons
// were 85 KB of text and 106 KB of structured content, search_dnd_content
// 35 KB and 184 KB, tools/list 32 KB and homebrew_overview 103 KB.
var answerBudgets = []struct {
	what   string
	tool   string // a tool, "tools/list" or "prompt:<name>"
	args   map[string]any
	budget int
}{
	{"lookup_creature type=dragon", "lookup_creature", map[string]any{"type": "dragon"}, 16 << 10},
	{"lookup_creature adult red dragon srd-2014", "lookup_creature", map[string]any{"name": "adult red dragon", "documents": []string{"srd-2014"}}, 12 << 10},
	{"lookup_spell fireball", "lookup_spell", map[string]any{"name": "fireball"}, 12 << 10},
	{"lookup_equipment longsword", "lookup_equipment", map[string]any{"name": "longsword"}, 8 << 10},
	{"lookup_spell level=3", "lookup_spell", map[string]any{"level": 3}, 16 << 10},
	{"search_dnd_content fire", "search_dnd_content", map[string]any{"query": "fire", "semantic": false}, 32 << 10},
	{"tools/list", "tools/list", nil, 29 << 10},
	{"homebrew_overview srd-2024", "prompt:homebrew_overview", map[string]any{"document": "srd-2024"}, 32 << 10},
}

// sizesSession is an MCP session over the whole snapshot (no vectors).
func sizesSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	svc := query.NewService(snapshotStore(t), nil, &query.Options{Version: "test"})
	srv := mcpserver.New(lkv1.NewQueryServiceClient(query.NewInProcessConn(svc, nil)), &mcpserver.Options{Version: "test"})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sizes-test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// answerSize is the size of one answer: its text content and its
// structured content, as JSON on the wire.
func answerSize(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (text, structured int) {
	t.Helper()
	ctx := context.Background()
	switch {
	case tool == "tools/list":
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return len(b), 0
	case strings.HasPrefix(tool, "prompt:"):
		sargs := map[string]string{}
		for k, v := range args {
			sargs[k] = fmt.Sprint(v)
		}
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: strings.TrimPrefix(tool, "prompt:"), Arguments: sargs})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return len(b), 0
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s %v: %v %v", tool, args, err, res)
	}
	for _, c := range res.Content {
		b, _ := json.Marshal(c)
		text += len(b)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return text, len(b)
}

// The answers of the calls fit their budgets (and the sizes are
// logged, to compare before and after).
func TestAnswerSizes(t *testing.T) {
	cs := sizesSession(t)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "call\ttext bytes\tstructured bytes\tbudget (each)\t")
	for _, c := range answerBudgets {
		text, structured := answerSize(t, cs, c.tool, c.args)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", c.what, text, structured, c.budget)
		if text > c.budget || structured > c.budget {
			t.Errorf("%s: %d bytes of text and %d of structured content, budget %d each", c.what, text, structured, c.budget)
		}
	}
	// A default search (no limit, no detail) answers within 32 KB, text
	// and structured content together, however many kinds and entities
	// its words reach: groups it did not ask for shrink to a line per
	// result, then every group to fewer results a page (issue #47: "can I
	// cast two spells in one turn" was 161 KB).
	for _, q := range []string{"can I cast two spells in one turn", "what happens when I drop to 0 hp", "poison", "dragon", "fire damage"} {
		text, structured := answerSize(t, cs, "search_dnd_content", map[string]any{"query": q})
		fmt.Fprintf(tw, "search_dnd_content %q\t%d\t%d\t%d (both)\t\n", q, text, structured, searchBudget)
		if text+structured > searchBudget {
			t.Errorf("search %q: %d bytes of text and %d of structured content, budget %d together", q, text, structured, searchBudget)
		}
	}
	tw.Flush()
	t.Logf("answer sizes:\n%s", b.String())
}

// searchBudget is what a default search may answer with, in bytes.
const searchBudget = 32 << 10

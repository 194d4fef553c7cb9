package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// issueCursor is the issue's hand-made cursor (offset -1, snapshot "x"),
// which killed the process through lookup_spell.
const issueCursor = "eyJ2IjoxLCJxIjoiMDA5MGE5NGFhMTQxZTc2OCIsInMiOiJ4IiwibyI6LTF9"

// fuzzTools are the tools FuzzToolCall picks from, by index.
var fuzzTools = []string{"lookup_spell", "lookup_creature", "lookup_equipment", "lookup_character_option", "lookup_rule", "search_dnd_content", "list_documents"}

// noPanics fails t when any MCP handler panicked: the server recovers them
// (an internal error), so a panic would otherwise pass for an error.
func noPanics(t *testing.T, h *harness, what string) {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lorekeeper_mcp_panics_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Fatalf("%s: a handler panicked (%v); log:\n%s", what, m.GetLabel(), h.logs.String())
			}
		}
	}
}

// FuzzToolCall sends any JSON as any tool's arguments, through the real
// SDK client: every call ends in a result (success or an error result) or
// invalid params (-32602), never a panic, an internal error or a lost
// session. Seeds are real calls, the issue's forged cursor among them.
func FuzzToolCall(f *testing.F) {
	for _, seed := range []struct {
		tool uint8
		args string
	}{
		{0, `{"semantic_query":"fire","limit":5,"cursor":"` + issueCursor + `"}`},
		{0, `{"name":"fireball"}`},
		{0, `{"level":3,"class_key":"wizard","school":"evocation","concentration":true,"detail":"summary"}`},
		{1, `{"cr":"1/4","type":"undead","limit":100}`},
		{1, `{"cr":0.25,"documents":["srd-2014"],"cursor":"!!"}`},
		{2, `{"type":"weapon","rarity":"rare","requires_attunement":"yes"}`},
		{3, `{"type":"class","parent":"wizard"}`},
		{4, `{"rule_type":"condition","section":"combat","name":"grap*"}`},
		{5, `{"query":"bigbys hand","entity_types":["spell"],"semantic":false,"limit":5,"cursor":"` + issueCursor + `"}`},
		{6, `{"source":"orcbrew","format":"json","limit":2,"cursor":"eyJ2IjoxfQ"}`},
		{0, `{"limit":1e400}`},
		{0, `{"limit":-1,"level":99999999999999999999}`},
		{0, `[]`},
		{0, `null`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // the client cannot send it; the SDK's own parser answers it
		}
		name := fuzzTools[int(tool)%len(fuzzTools)]
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		var werr *jsonrpc.Error
		switch {
		case err == nil:
			if res.IsError && strings.Contains(text(res), "goroutine") {
				t.Fatalf("%s(%s): %s", name, args, text(res))
			}
		case errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams:
		default:
			t.Fatalf("%s(%s): %v, want a result or invalid params", name, args, err)
		}
		noPanics(t, h, name+"("+string(args)+")")
	})
}

// FuzzListCursor: the MCP list methods' cursors (made and decoded by the
// SDK) take anything: a page, or invalid params.
func FuzzListCursor(f *testing.F) {
	h := newHarness(f)
	// Real cursors: the second page of resources/list, and of tools/list
	// at page size 1 would be the SDK's own encoding too.
	res, err := h.cs.ListResources(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{res.NextCursor, "", "x", issueCursor, base64.URLEncoding.EncodeToString([]byte("\x1f\xff\x81\x03\x01\x01\tpageToken")), "====", strings.Repeat("A", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		ctx := context.Background()
		calls := map[string]func() error{
			"resources/list": func() error { _, err := h.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor}); return err },
			"resources/templates/list": func() error {
				_, err := h.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				return err
			},
			"prompts/list": func() error { _, err := h.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor}); return err },
			"tools/list":   func() error { _, err := h.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); return err },
		}
		for method, call := range calls {
			err := call()
			var werr *jsonrpc.Error
			if err != nil && (!errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams) {
				t.Fatalf("%s with cursor %q: %v, want a page or invalid params", method, cursor, err)
			}
		}
		noPanics(t, h, "cursor "+cursor)
	})
}

// FuzzPromptArguments: any value of any prompt argument, in prompts/get
// and completion/complete, ends in an answer or an error, never a panic.
func FuzzPromptArguments(f *testing.F) {
	for _, s := range []string{"fireball", "3,3,4,5", "srd-2014,tob", "moderate", "", strings.Repeat("é", 201), "\x00", "creature", "20 20 20 20 20 20 20 20 20 20 20 20 20"} {
		f.Add(s)
	}
	h := newHarness(f)
	prompts, err := h.cs.ListPrompts(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ctx := context.Background()
		for _, p := range prompts.Prompts {
			args := map[string]string{}
			for _, a := range p.Arguments {
				args[a.Name] = s
			}
			if _, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args}); err != nil {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) {
					t.Fatalf("%s(%q): %v, want an answer or a JSON-RPC error", p.Name, s, err)
				}
			}
			for _, a := range p.Arguments {
				_, err := h.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: p.Name},
					Argument: mcp.CompleteParamsArgument{Name: a.Name, Value: s}, Context: &mcp.CompleteContext{Arguments: args}})
				var werr *jsonrpc.Error
				if err != nil && !errors.As(err, &werr) {
					t.Fatalf("complete %s.%s=%q: %v, want an answer or a JSON-RPC error", p.Name, a.Name, s, err)
				}
			}
		}
		noPanics(t, h, "prompt arguments "+s)
	})
}

// FuzzResourceURI: whatever follows the entity and document URI prefixes
// in resources/read is a resource or a JSON-RPC error, never a panic or a
// closed session. It found "a\x01": the SDK's "resource not found" error
// could not be encoded and the session (with stdio, the process) ended.
func FuzzResourceURI(f *testing.F) {
	for _, s := range []string{"open5e_v2:srd-2014:spell:fireball", "open5e_v2/srd-2014", "orcbrew/my%20book", "%zz", "", "/", "a/b/c", strings.Repeat("x", 3000),
		"a\x01", "open5e_v2/srd\x7f", "x\U0001F600\u200b"} {
		f.Add(s)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // JSON would replace the bytes; nothing new to learn
		}
		for _, uri := range []string{"lorekeeper://entity/" + s, mcpserver.DocumentURIPrefix + s} {
			_, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			var werr *jsonrpc.Error
			if err != nil && !errors.As(err, &werr) {
				t.Fatalf("resources/read %q: %v, want a resource or a JSON-RPC error", uri, err)
			}
		}
		noPanics(t, h, "resources/read "+s)
	})
}

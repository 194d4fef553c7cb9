package mcpserver_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// TestCompletion_ArgumentLimit: every argument of every prompt and
// resource template the server lists takes at most MaxCompletionArgument
// characters in completion/complete; beyond it, and for a context argument
// beyond it, the answer is invalid params (-32602). The case, a
// 960 KB documents list, was answered with 11.5 MB.
func TestCompletion_ArgumentLimit(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	type target struct {
		ref  *mcp.CompleteReference
		args []string
	}
	var targets []target
	prompts, err := h.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		tg := target{ref: &mcp.CompleteReference{Type: "ref/prompt", Name: p.Name}}
		for _, a := range p.Arguments {
			tg.args = append(tg.args, a.Name)
		}
		targets = append(targets, tg)
	}
	templates, err := h.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`\{([a-z_]+)\}`)
	for _, tmpl := range templates.ResourceTemplates {
		tg := target{ref: &mcp.CompleteReference{Type: "ref/resource", URI: tmpl.URITemplate}}
		for _, m := range vars.FindAllStringSubmatch(tmpl.URITemplate, -1) {
			tg.args = append(tg.args, m[1])
		}
		targets = append(targets, tg)
	}
	n := 0
	for _, tg := range targets {
		n += len(tg.args)
	}
	if len(prompts.Prompts) == 0 || len(templates.ResourceTemplates) == 0 || n < len(targets) {
		t.Fatalf("%d prompts, %d templates, %d arguments: nothing to check", len(prompts.Prompts), len(templates.ResourceTemplates), n)
	}
	complete := func(tg target, arg, value string, ctxArgs map[string]string) error {
		p := &mcp.CompleteParams{Ref: tg.ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if ctxArgs != nil {
			p.Context = &mcp.CompleteContext{Arguments: ctxArgs}
		}
		_, err := h.cs.Complete(ctx, p)
		return err
	}
	invalidParams := func(err error) bool {
		var werr *jsonrpc.Error
		return errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && strings.Contains(werr.Message, "at most 200")
	}
	atLimit := strings.Repeat("é", mcpserver.MaxCompletionArgument) // characters, not bytes
	over := atLimit + "x"
	for _, tg := range targets {
		for _, arg := range tg.args {
			name := tg.ref.Name + tg.ref.URI + " " + arg
			if err := complete(tg, arg, atLimit, nil); err != nil {
				t.Errorf("%s: %d characters: %v, want an answer", name, mcpserver.MaxCompletionArgument, err)
			}
			if err := complete(tg, arg, over, nil); !invalidParams(err) {
				t.Errorf("%s: %d characters: %v, want -32602", name, mcpserver.MaxCompletionArgument+1, err)
			}
			if err := complete(tg, arg, "a", map[string]string{"kind": over}); !invalidParams(err) {
				t.Errorf("%s with a context argument of %d characters: %v, want -32602", name, mcpserver.MaxCompletionArgument+1, err)
			}
		}
	}
	// The case.
	huge := strings.Repeat("srd-2014,", 960*1024/9)
	if err := complete(target{ref: &mcp.CompleteReference{Type: "ref/prompt", Name: mcpserver.PromptPlanEncounter}}, "documents", huge, nil); !invalidParams(err) {
		t.Errorf("plan_encounter documents of %d bytes: %v, want -32602", len(huge), err)
	}
}

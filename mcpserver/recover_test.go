package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestServer_RecoversPanics: a handler that panics costs its request an
// internal error (-32603), logged with the stack and counted; the session
// and the server go on answering.
func TestServer_RecoversPanics(t *testing.T) {
	h := newHarness(t)
	mcp.AddTool(h.srv.MCP(), &mcp.Tool{Name: "boom", Description: "panics"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		var m map[string]int
		m["nil map"] = 1 //nolint:staticcheck // a real runtime panic, as a bug would make
		return nil, nil, nil
	})
	ctx := context.Background()
	for i := range 2 {
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "boom"})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError {
			t.Fatalf("call %d of a panicking tool: %v, want a JSON-RPC internal error", i, err)
		}
		if strings.Contains(werr.Message, "nil map") || strings.Contains(werr.Message, "goroutine") {
			t.Errorf("the client sees the panic: %q", werr.Message)
		}
	}
	logs := h.logs.String()
	for _, want := range []string{"panicked", "method=tools/call", "assignment to entry in nil map", "recover_test.go"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	want := `# HELP lorekeeper_mcp_panics_total MCP requests whose handler panicked (answered with an internal error; the process goes on), by method.
# TYPE lorekeeper_mcp_panics_total counter
lorekeeper_mcp_panics_total{method="completion/complete"} 0
lorekeeper_mcp_panics_total{method="prompts/get"} 0
lorekeeper_mcp_panics_total{method="resources/read"} 0
lorekeeper_mcp_panics_total{method="tools/call"} 2
`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want), "lorekeeper_mcp_panics_total"); err != nil {
		t.Error(err)
	}
	// The same session still serves real tools.
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: map[string]any{"name": "fireball"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "Fireball") {
		t.Fatalf("lookup_spell after the panics: %v, %+v", err, res)
	}
}

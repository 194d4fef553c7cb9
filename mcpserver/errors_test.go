package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// allTools are a valid call of every tool.
var allTools = []struct {
	name string
	args map[string]any
}{
	{"lookup_spell", map[string]any{"name": "fireball"}},
	{"lookup_creature", map[string]any{"cr": 5}},
	{"lookup_equipment", map[string]any{"type": "weapon"}},
	{"lookup_character_option", map[string]any{"type": "feat"}},
	{"lookup_rule", map[string]any{"rule_type": "condition"}},
	{"search_dnd_content", map[string]any{"query": "fire"}},
	{"list_documents", nil},
}

func TestTools_QueryServiceOutage(t *testing.T) {
	h := newHarness(t)
	const detail = "connection refused: dial tcp 10.1.2.3:7070 secret-detail"
	tests := []struct {
		code    codes.Code
		want    string
		outcome string
	}{
		{codes.Unavailable, "temporarily unavailable", mcpserver.OutcomeUnavailable},
		{codes.DeadlineExceeded, "temporarily unavailable", mcpserver.OutcomeUnavailable},
		{codes.Internal, "internal error", mcpserver.OutcomeError},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			h.fake.setErr(status.Error(tt.code, detail))
			t.Cleanup(func() { h.fake.setErr(nil) })
			for _, tool := range allTools {
				before := h.calls(t, tool.name, tt.outcome)
				res := h.call(t, tool.name, tool.args)
				if !res.IsError {
					t.Fatalf("%s: want an error result, got %s", tool.name, text(res))
				}
				got := text(res)
				wantContains(t, got, tt.want)
				if strings.Contains(got, "secret-detail") || strings.Contains(got, "10.1.2.3") || strings.Contains(got, "goroutine") {
					t.Errorf("%s: detail leaked to the client: %s", tool.name, got)
				}
				if res.StructuredContent != nil {
					t.Errorf("%s: error result has structured content", tool.name)
				}
				if after := h.calls(t, tool.name, tt.outcome); after != before+1 {
					t.Errorf("%s: %s counter went %v -> %v", tool.name, tt.outcome, before, after)
				}
			}
			// The detail is logged for operators.
			wantContains(t, h.logs.String(), "secret-detail", "code="+tt.code.String())
		})
	}
	t.Run("resource read", func(t *testing.T) {
		h.fake.setErr(status.Error(codes.Unavailable, detail))
		t.Cleanup(func() { h.fake.setErr(nil) })
		_, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball"})
		if err == nil || !strings.Contains(err.Error(), "temporarily unavailable") || strings.Contains(err.Error(), "secret-detail") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("index loading after a restart", func(t *testing.T) {
		// As the query service says it (query.toStatus): the user reads how
		// far the load is, not "temporarily unavailable".
		st, err := status.New(codes.Unavailable, "badgerstore: the in-memory index is loading (12 of 9790 entities so far); retry in a few seconds").
			WithDetails(&errdetails.ErrorInfo{Reason: lkv1.ReasonIndexLoading, Domain: lkv1.ErrorDomain})
		if err != nil {
			t.Fatal(err)
		}
		h.fake.setErr(st.Err())
		t.Cleanup(func() { h.fake.setErr(nil) })
		before := h.calls(t, "lookup_spell", mcpserver.OutcomeUnavailable)
		res := h.call(t, "lookup_spell", map[string]any{"name": "fireball"})
		if !res.IsError {
			t.Fatal("want an error result")
		}
		wantContains(t, text(res), "LoreKeeper has just restarted: the in-memory index is loading (12 of 9790 entities so far); retry in a few seconds.")
		if strings.Contains(text(res), "badgerstore") {
			t.Errorf("package name leaked: %s", text(res))
		}
		if after := h.calls(t, "lookup_spell", mcpserver.OutcomeUnavailable); after != before+1 {
			t.Errorf("unavailable counter went %v -> %v", before, after)
		}
	})
	t.Run("invalid argument from the service", func(t *testing.T) {
		h.fake.setErr(status.Error(codes.InvalidArgument, "name pattern too long"))
		t.Cleanup(func() { h.fake.setErr(nil) })
		res := h.call(t, "lookup_spell", map[string]any{"name": "x"})
		if !res.IsError {
			t.Fatal("want an error result")
		}
		wantContains(t, text(res), "invalid argument: name pattern too long")
	})
}

// calls returns lorekeeper_mcp_tool_calls_total{tool,outcome}.
func (h *harness) calls(t testing.TB, tool, outcome string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lorekeeper_mcp_tool_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tool"] == tool && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestMetrics(t *testing.T) {
	h := newHarness(t)
	for _, tool := range allTools {
		mustOK(t, h.call(t, tool.name, tool.args))
	}
	h.call(t, "lookup_spell", map[string]any{"school": "pyromancy"}) // ours
	h.call(t, "lookup_spell", map[string]any{"level": "high"})       // the SDK's schema check
	for _, tool := range allTools {
		if got := h.calls(t, tool.name, mcpserver.OutcomeOK); got != 1 {
			t.Errorf("%s ok = %v, want 1", tool.name, got)
		}
	}
	if got := h.calls(t, "lookup_spell", mcpserver.OutcomeInvalid); got != 2 {
		t.Errorf("lookup_spell invalid_argument = %v, want 2", got)
	}
	problems, err := testutil.GatherAndLint(h.reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	n, err := testutil.GatherAndCount(h.reg, "lorekeeper_mcp_tool_duration_seconds")
	if err != nil || n != 7 {
		t.Errorf("duration series = %d (%v), want 7", n, err)
	}
}

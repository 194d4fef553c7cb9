package main

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/deploy/metricsuse"
	"lorekeeper.dev/deploy/promrun"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// A small homebrew book, and a broken one, to exercise the import metrics.
const (
	goodOrcBrew = `{"Observability Test" {:orcpub.dnd.e5/spells {:test-spark {:name "Test Spark" :level 0 :school :evocation :description "A harmless spark for tests."}}}}`
	badOrcBrew  = `{"Broken" {:orcpub.dnd.e5/spells {:x {:name "unterminated`
)

// exercise uses every role the way people do, so that the metrics the
// dashboards chart have samples: MCP tool calls (one invalid), gRPC
// queries, a semantic query, an OrcBrew import that works and one that fails.
func exercise(t *testing.T, st *upStack) {
	t.Helper()
	ctx := t.Context()
	c := mcp.NewClient(&mcp.Implementation{Name: "lorekeeper-e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: st.mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"lookup_spell", map[string]any{"name": "fireball"}},
		{"lookup_spell", map[string]any{"semantic_query": "explosive fire damage", "level": 3}},
		{"search_dnd_content", map[string]any{"query": "fire damage"}},
		{"list_documents", map[string]any{}},
		{"lookup_spell", map[string]any{"school": "pyromancy"}}, // invalid: a validation error result
	}
	for _, call := range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args}); err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
	}

	nc, err := nats.Connect(st.natsURL, nats.Token(testToken(t, st.dataDir, natsToken)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for name, body := range map[string]string{"good.orcbrew": goodOrcBrew, "bad.orcbrew": badOrcBrew} {
		if _, err := orcbrew.Put(ctx, js, name, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "both imports recorded", func() bool {
		states, err := orcbrew.Statuses(ctx, js)
		return err == nil && len(states) == 2
	})
	conn, client, err := dialQuery(st.grpcAddr, nil, testToken(t, st.dataDir, grpcToken))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitUntil(t, "the homebrew spell stored", func() bool {
		r, err := client.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "Test Spark"}})
		return err == nil && len(r.GetResults()) == 1
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exportedFamilies are the metric families a /metrics scrape declares.
func exportedFamilies(t *testing.T, addr string) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = true
		}
	}
	return out
}

// needsAFault lists the metric families that have samples only once
// something goes wrong; none may: every counter a dashboard or a rule uses
// is exported from the start (closed label sets at zero), so every
// dashboard and rule query must return data on a healthy stack.
var needsAFault []string

func TestUp_DashboardsAndAlertsHaveData(t *testing.T) {
	st := startTestStack(t, testUpConfig(t, t.TempDir()))
	exercise(t, st)

	uses, err := metricsuse.Uses()
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedFamilies(t, st.metricsAddr)
	var missing []string
	for _, u := range uses {
		if !exported[u.Family] && !slices.Contains(needsAFault, u.Family) && !slices.Contains(missing, u.Family) {
			missing = append(missing, u.Family+" (used by "+u.Source+")")
		}
	}
	if len(missing) > 0 {
		t.Errorf("dashboards and rules use metrics /metrics does not export:\n  %s", strings.Join(missing, "\n  "))
	}

	prom, err := promrun.Start(t.Context(), t.TempDir(), []string{st.metricsAddr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// rate() over a window needs two scrapes in it; wait for a few.
	if _, err := prom.WaitFor(ctx, `count_over_time(up{job="lorekeeper"}[1m]) >= 4`); err != nil {
		t.Fatalf("Prometheus never scraped lorekeeper: %v", err)
	}
	exprs, err := metricsuse.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	var empty []string
	for _, e := range exprs {
		if e.Record != "" || strings.Contains(e.Source, "rules.yml") {
			continue // alert conditions are meant to be empty on a healthy stack
		}
		samples, err := prom.Query(ctx, e.Query)
		if err != nil {
			t.Errorf("%s: %s: %v", e.Source, e.Query, err)
			continue
		}
		if len(samples) == 0 && !usesOnly(e.Query, needsAFault) {
			empty = append(empty, e.Source+": "+e.Query)
		}
	}
	if len(empty) > 0 {
		t.Errorf("%d dashboard queries return no data on a running, exercised stack:\n  %s", len(empty), strings.Join(empty, "\n  "))
	}
	rules, err := prom.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Error("Prometheus loaded no alert rules")
	}
	for _, r := range rules {
		if r.Health != "ok" && r.Health != "unknown" {
			t.Errorf("rule %s: health %s", r.Name, r.Health)
		}
	}
}

// usesOnly reports whether every lorekeeper metric query names is in set.
func usesOnly(query string, set []string) bool {
	found := false
	for _, f := range set {
		if strings.Contains(query, f) {
			found = true
		}
	}
	return found
}

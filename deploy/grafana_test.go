package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/deploy/metricsuse"
)

type dashPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ X, Y, W, H int } `json:"gridPos"`
	Panels  []dashPanel              `json:"panels"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}

// TestDashboards checks the dashboards' structure: unique uids and panel
// ids, every panel on the provisioned Prometheus datasource, panels inside
// the 24-column grid and not overlapping.
func TestDashboards(t *testing.T) {
	var ds struct {
		Datasources []struct{ UID string } `json:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/prometheus.yaml", &ds)
	if len(ds.Datasources) != 1 {
		t.Fatalf("want one provisioned datasource, got %d", len(ds.Datasources))
	}
	dsUID := ds.Datasources[0].UID
	files, _ := filepath.Glob("grafana/dashboards/*.json")
	uids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			UID    string      `json:"uid"`
			Title  string      `json:"title"`
			Panels []dashPanel `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.UID == "" || d.Title == "" {
			t.Errorf("%s: want a uid and a title", f)
		}
		if prev, ok := uids[d.UID]; ok {
			t.Errorf("%s: uid %s also in %s", f, d.UID, prev)
		}
		uids[d.UID] = f
		ids := map[int]bool{}
		var cells [][2]int
		var walk func([]dashPanel)
		walk = func(ps []dashPanel) {
			for _, p := range ps {
				if ids[p.ID] {
					t.Errorf("%s: panel id %d twice", f, p.ID)
				}
				ids[p.ID] = true
				g := p.GridPos
				if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
					t.Errorf("%s: panel %q: gridPos %+v outside the grid", f, p.Title, g)
				}
			overlap:
				for x := g.X; x < g.X+g.W; x++ {
					for y := g.Y; y < g.Y+g.H; y++ {
						if slices.Contains(cells, [2]int{x, y}) {
							t.Errorf("%s: panel %q overlaps another at (%d,%d)", f, p.Title, x, y)
							break overlap
						}
					}
				}
				for x := g.X; x < g.X+g.W; x++ {
					for y := g.Y; y < g.Y+g.H; y++ {
						cells = append(cells, [2]int{x, y})
					}
				}
				walk(p.Panels)
				if p.Type == "row" {
					continue
				}
				if p.Datasource == nil || p.Datasource.UID != dsUID {
					t.Errorf("%s: panel %q: datasource %+v, want uid %s", f, p.Title, p.Datasource, dsUID)
				}
				if len(p.Targets) == 0 {
					t.Errorf("%s: panel %q has no query", f, p.Title)
				}
				for _, tg := range p.Targets {
					if tg.Datasource != nil && tg.Datasource.UID != dsUID {
						t.Errorf("%s: panel %q target %s: datasource %s", f, p.Title, tg.RefID, tg.Datasource.UID)
					}
				}
			}
		}
		walk(d.Panels)
	}
	if len(uids) != 3 {
		t.Errorf("%d dashboards, want 3 (overview, ingestion, query node)", len(uids))
	}
}

// TestDashboards_content checks each dashboard shows what the issue asks
// of it, by the metrics its panels select.
func TestDashboards_content(t *testing.T) {
	uses, err := metricsuse.Uses()
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string][]metricsuse.Use{}
	for _, u := range uses {
		file, _, _ := strings.Cut(u.Source, ":")
		shown[filepath.Base(file)] = append(shown[filepath.Base(file)], u)
	}
	has := func(file, metric string) bool {
		for _, u := range shown[file] {
			if u.Metric == metric {
				return true
			}
		}
		return false
	}
	for file, metrics := range map[string][]string{
		"overview.json": {
			"lorekeeper_mcp_tool_calls_total",                  // request rate, errors
			"lorekeeper_mcp_tool_duration_seconds_bucket",      // p99 per tool
			"lorekeeper_ingest_last_success_timestamp_seconds", // Open5e freshness
			"lorekeeper_ingest_orcbrew_imports_total",          // OrcBrew
			"lorekeeper_query_request_duration_seconds_count",
		},
		"ingestion.json": {
			"lorekeeper_ingest_resync_duration_seconds_count", // resync timeline
			"lorekeeper_ingest_entities_published_total",      // by document
			"lorekeeper_embedder_consumer_pending_messages",   // lag
			"lorekeeper_embedder_dead_letters_total",
			"lorekeeper_ingest_fetch_errors_total",
		},
		"query-node.json": {
			"lorekeeper_query_request_duration_seconds_bucket",
			"lorekeeper_vectorindex_search_duration_seconds_bucket",
			"lorekeeper_embedder_embed_duration_seconds_bucket",
			"lorekeeper_embedder_batch_size_messages_bucket",
			"lorekeeper_embedder_embedding_cache_hits_total",
			"go_goroutines",
			"process_resident_memory_bytes",
		},
	} {
		for _, m := range metrics {
			if !has(file, m) {
				t.Errorf("%s: no panel selects %s", file, m)
			}
		}
	}
	// p99 per tool: a quantile grouped by tool.
	exprs, err := metricsuse.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	p99 := false
	for _, e := range exprs {
		if strings.HasPrefix(e.Source, "grafana/dashboards/overview.json") && strings.Contains(e.Text, "histogram_quantile(0.99") && strings.Contains(e.Text, "by (le, tool)") {
			p99 = true
		}
	}
	if !p99 {
		t.Error("overview.json: no p99 per tool")
	}
}

package metricsuse_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"lorekeeper.dev/deploy/metricsuse"
)

// targetLabels are the labels Prometheus adds to every scraped series
// (prometheus/prometheus.yml: job, instance and the static role label).
var targetLabels = []string{"job", "instance", "role"}

// check returns what is wrong with uses against the families the code
// exports: unknown metrics, histogram series on non-histograms (and the
// reverse), and label matchers on labels the metric does not have.
func check(uses []metricsuse.Use, fams map[string]family) []string {
	var probs []string
	for _, u := range uses {
		f, ok := fams[u.Metric]
		suffix := ""
		if !ok || f.Type == "histogram" || f.Type == "summary" {
			// A histogram or summary is selected through its series.
			f, ok = fams[u.Family]
			suffix = strings.TrimPrefix(u.Metric, u.Family)
		}
		if !ok {
			probs = append(probs, fmt.Sprintf("%s: %s is exported by no role", u.Source, u.Metric))
			continue
		}
		switch {
		case suffix == "_bucket" && f.Type != "histogram":
			probs = append(probs, fmt.Sprintf("%s: %s: %s is a %s, not a histogram", u.Source, u.Metric, f.Name, f.Type))
		case (suffix == "_sum" || suffix == "_count") && f.Type != "histogram" && f.Type != "summary":
			probs = append(probs, fmt.Sprintf("%s: %s: %s is a %s, neither histogram nor summary", u.Source, u.Metric, f.Name, f.Type))
		case suffix == "" && f.Type == "histogram":
			probs = append(probs, fmt.Sprintf("%s: %s is a histogram: select its _bucket, _sum or _count", u.Source, u.Metric))
		}
		allowed := append(slices.Clone(f.Labels), targetLabels...)
		if suffix == "_bucket" {
			allowed = append(allowed, "le")
		}
		if f.Type == "summary" && suffix == "" {
			allowed = append(allowed, "quantile")
		}
		for _, l := range u.Labels {
			if !slices.Contains(allowed, l) {
				probs = append(probs, fmt.Sprintf("%s: %s has no label %q (labels: %v)", u.Source, u.Metric, l, f.Labels))
			}
		}
	}
	return probs
}

func exported(t *testing.T) map[string]family {
	t.Helper()
	fams := sourceFamilies(t)
	for name, f := range collectorFamilies(t) {
		fams[name] = f
	}
	return fams
}

// TestUses_exportedByTheCode checks every metric a dashboard panel or rule
// selects against the metrics declared in the workspace's Go sources and the
// Go runtime and process collectors.
func TestUses_exportedByTheCode(t *testing.T) {
	uses, err := metricsuse.Uses()
	if err != nil {
		t.Fatal(err)
	}
	fams := exported(t)
	for _, p := range check(uses, fams) {
		t.Error(p)
	}
	t.Logf("%d selectors, %d metric families used; %d families exported", len(uses), len(metricsuse.Names(uses)), len(fams))
}

// TestUses_everyLoreKeeperMetricShown fails when a role exports a metric no
// dashboard panel or alert uses: a dashboard that is true shows them all.
func TestUses_everyLoreKeeperMetricShown(t *testing.T) {
	names, err := metricsuse.MetricNames()
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range sourceFamilies(t) {
		if strings.HasPrefix(name, "lorekeeper_") && !slices.Contains(names, name) {
			t.Errorf("%s (%s, %s) is on no dashboard and in no rule", name, f.Type, f.Where)
		}
	}
}

// TestSourceScan_findsTheRoles guards the scanner itself: it must find
// each role's metrics, with types and labels, or the tests above prove
// nothing.
func TestSourceScan_findsTheRoles(t *testing.T) {
	fams := sourceFamilies(t)
	for name, want := range map[string]family{
		"lorekeeper_ingest_entities_published_total":     {Type: "counter", Labels: []string{"kind", "document", "outcome"}},
		"lorekeeper_ingest_orcbrew_imports_total":        {Type: "counter", Labels: []string{"outcome"}},
		"lorekeeper_embedder_consumer_pending_messages":  {Type: "gauge"},
		"lorekeeper_embedder_embed_duration_seconds":     {Type: "histogram", Labels: []string{"model"}},
		"lorekeeper_query_request_duration_seconds":      {Type: "histogram", Labels: []string{"method"}},
		"lorekeeper_mcp_tool_calls_total":                {Type: "counter", Labels: []string{"tool", "outcome"}},
		"lorekeeper_vectorindex_search_duration_seconds": {Type: "histogram", Labels: []string{"backend"}},
	} {
		got, ok := fams[name]
		if !ok {
			t.Errorf("%s not found in the Go sources", name)
			continue
		}
		if got.Type != want.Type || !slices.Equal(got.Labels, want.Labels) {
			t.Errorf("%s: got %s %v, want %s %v", name, got.Type, got.Labels, want.Type, want.Labels)
		}
	}
}

func TestScanGoSource(t *testing.T) {
	src := []byte(`package x
var m = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Namespace: "lorekeeper", Subsystem: "x", Name: "wait_seconds",
	Help: "Braces {in} help, a rune '}' and a \"quote\".", // comment with }
	Buckets: []float64{1, 2},
}, []string{"a", "b"})
var g = prometheus.NewGauge(prometheus.GaugeOpts{Name: "up_things"})
var o = prometheus.HistogramOpts{Buckets: nil}
`)
	got, err := scanGoSource("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []family{
		{Name: "lorekeeper_x_wait_seconds", Type: "histogram", Labels: []string{"a", "b"}, Where: "x.go:2"},
		{Name: "up_things", Type: "gauge", Where: "x.go:7"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}

	_, err = scanGoSource("y.go", []byte(`var c = prometheus.NewCounter(prometheus.CounterOpts{Name: name})`))
	if err == nil {
		t.Error("a non-literal Name: got no error")
	}
}

// TestCheck_catchesMistakes runs check on dashboards with known mistakes:
// the comparison must be able to fail.
func TestCheck_catchesMistakes(t *testing.T) {
	fams := map[string]family{
		"lorekeeper_mcp_tool_calls_total":      {Name: "lorekeeper_mcp_tool_calls_total", Type: "counter", Labels: []string{"tool", "outcome"}},
		"lorekeeper_mcp_tool_duration_seconds": {Name: "lorekeeper_mcp_tool_duration_seconds", Type: "histogram", Labels: []string{"tool"}},
		"go_gc_duration_seconds":               {Name: "go_gc_duration_seconds", Type: "summary"},
	}
	for _, tc := range []struct {
		name, expr, want string
	}{
		{"ok counter", `sum by (tool) (rate(lorekeeper_mcp_tool_calls_total{outcome="ok"}[$__rate_interval]))`, ""},
		{"ok histogram", `histogram_quantile(0.99, sum by (le) (rate(lorekeeper_mcp_tool_duration_seconds_bucket{tool="x",le!=""}[5m])))`, ""},
		{"ok summary", `rate(go_gc_duration_seconds_count[5m]) + on() go_gc_duration_seconds{quantile="1"}`, ""},
		{"typo", `rate(lorekeeper_mcp_tool_call_total[5m])`, "exported by no role"},
		{"missing _total", `rate(lorekeeper_mcp_tool_calls[5m])`, "exported by no role"},
		{"bucket of a counter", `lorekeeper_mcp_tool_calls_total_bucket`, "not a histogram"},
		{"histogram by its base name", `lorekeeper_mcp_tool_duration_seconds`, "is a histogram"},
		{"unknown label", `lorekeeper_mcp_tool_calls_total{method="x"}`, `no label "method"`},
		{"le off a bucket", `lorekeeper_mcp_tool_duration_seconds_count{le="1"}`, `no label "le"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := dashboardFS(tc.expr)
			uses, err := metricsuse.UsesFS(fsys)
			if err != nil {
				t.Fatal(err)
			}
			probs := strings.Join(check(uses, fams), "\n")
			if tc.want == "" && probs != "" {
				t.Errorf("got problems %s, want none", probs)
			}
			if tc.want != "" && !strings.Contains(probs, tc.want) {
				t.Errorf("got problems %q, want one containing %q", probs, tc.want)
			}
		})
	}
}

func TestUsesFS_errors(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"bad PromQL", `sum(rate(x[5m])`, "unclosed left parenthesis"},
		{"unknown variable", `rate(x{job="$job"}[5m])`, "unknown Grafana variable $job"},
		{"regex name", `{__name__=~"lorekeeper_.*"}`, "must be a literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := metricsuse.UsesFS(dashboardFS(tc.expr))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMetricNames(t *testing.T) {
	names, err := metricsuse.MetricNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lorekeeper_mcp_tool_duration_seconds", // from ..._bucket
		"lorekeeper_ingest_last_success_timestamp_seconds",
		"lorekeeper_embedder_dead_letters_total",
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("MetricNames() lacks %s", want)
		}
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_bucket") || strings.HasSuffix(n, "_count") {
			t.Errorf("MetricNames() has series name %s, want its family", n)
		}
	}
	exprs, err := metricsuse.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exprs {
		if strings.Contains(e.Query, "$") {
			t.Errorf("%s: query %q still has a variable", e.Source, e.Query)
		}
	}
	t.Logf("%d expressions, %d metric families", len(exprs), len(names))
}

// dashboardFS is a deploy tree with one rule and one dashboard panel
// holding expr.
func dashboardFS(expr string) fstest.MapFS {
	q := strings.ReplaceAll(expr, `"`, `\"`)
	return fstest.MapFS{
		"prometheus/rules.yml": {Data: []byte("groups:\n  - name: g\n    rules:\n      - record: job:x:rate5m\n        expr: vector(1)\n")},
		"grafana/dashboards/d.json": {Data: []byte(`{"panels": [{"id": 1, "type": "row", "panels": [
			{"id": 2, "title": "p", "targets": [{"refId": "A", "expr": "` + q + `"}]}]}]}`)},
	}
}

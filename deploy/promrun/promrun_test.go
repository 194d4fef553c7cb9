package promrun_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lorekeeper.dev/deploy/metricsuse"
	"lorekeeper.dev/deploy/promrun"
)

// TestServer runs Debian's Prometheus against a /metrics that exports the
// Go and process collectors and one LoreKeeper gauge, and checks it
// scrapes them, loads every alert rule healthy, accepts every dashboard
// expression, and returns data for those that select only those metrics. It fails, not
// skips, when prometheus is missing (`make tools`).
func TestServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	pending := prometheus.NewGauge(prometheus.GaugeOpts{Name: "lorekeeper_embedder_consumer_pending_messages", Help: "test"})
	reg.MustRegister(pending)
	pending.Set(42)
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer ts.Close()

	// The deadline only bounds a hang; nothing asserts how fast it went.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log strings.Builder
	s, err := promrun.Start(ctx, t.TempDir(), []string{strings.TrimPrefix(ts.URL, "http://")}, &promrun.Options{Stderr: &log})
	if errors.Is(err, promrun.ErrNotInstalled) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	defer s.Close()

	got, err := s.WaitFor(ctx, "lorekeeper_embedder_consumer_pending_messages")
	if err != nil {
		t.Fatal(err)
	}
	if v := got[0].Value[1]; v != "42" {
		t.Errorf("pending: got %v, want 42", v)
	}
	if job := got[0].Metric["job"]; job != "lorekeeper" {
		t.Errorf("job label %q, want lorekeeper", job)
	}

	rules, err := s.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 10 {
		t.Errorf("%d rules loaded, want the 10 of rules.yml", len(rules))
	}
	for _, r := range rules {
		if r.Health == "err" {
			t.Errorf("rule %s: %s", r.Name, r.Error)
		}
	}

	// Two scrapes, so rates have data.
	if _, err := s.WaitFor(ctx, "rate(process_cpu_seconds_total[1m])"); err != nil {
		t.Fatal(err)
	}
	// Dashboard panels that select only the exported metrics return data.
	uses, err := metricsuse.Uses()
	if err != nil {
		t.Fatal(err)
	}
	exprs, err := metricsuse.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	exported := func(family string) bool {
		return strings.HasPrefix(family, "go_") || strings.HasPrefix(family, "process_") ||
			family == "lorekeeper_embedder_consumer_pending_messages"
	}
	answerable := map[string]bool{}
	for _, u := range uses {
		if _, ok := answerable[u.Source]; !ok {
			answerable[u.Source] = true
		}
		answerable[u.Source] = answerable[u.Source] && exported(u.Family)
	}
	tried := 0
	for _, e := range exprs {
		if !strings.HasPrefix(e.Source, "grafana/") {
			continue
		}
		if !answerable[e.Source] {
			// Every other panel must at least be a valid query.
			if _, err := s.Query(ctx, e.Query); err != nil {
				t.Errorf("%s: %v", e.Source, err)
			}
			continue
		}
		tried++
		got, err := s.Query(ctx, e.Query)
		if err != nil {
			t.Errorf("%s: %v", e.Source, err)
		} else if len(got) == 0 {
			t.Errorf("%s: %q returned no data", e.Source, e.Query)
		}
	}
	if tried < 6 {
		t.Errorf("tried %d dashboard expressions, want at least 6", tried)
	}
	if _, err := s.Query(ctx, "sum(rate(x[5m])"); err == nil {
		t.Error("a broken query: got no error")
	}
}

package orcbrew_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestNewMetrics_startAtZero: every outcome and kind is exported before
// the first import, so the failed-imports alert sees the first failure.
func TestNewMetrics_startAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	orcbrew.NewMetrics(reg)
	tests := []struct {
		name string
		want int
	}{
		{"lorekeeper_ingest_orcbrew_imports_total", 5},
		{"lorekeeper_ingest_orcbrew_entities_total", len(lkv1.Kinds())},
	}
	for _, tt := range tests {
		if got := testutil.CollectAndCount(reg, tt.name); got != tt.want {
			t.Errorf("%s: %d series before any import, want %d", tt.name, got, tt.want)
		}
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

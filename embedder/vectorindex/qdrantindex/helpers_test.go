package qdrantindex_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const pinnedFireballID = "048219a9-ca6d-57ca-a0df-360b24b2a96b"

func prometheusRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

func errorsTotal(t *testing.T, reg *prometheus.Registry, backend, op string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lorekeeper_vectorindex_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["backend"] == backend && labels["op"] == op {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

package orcbrew

import (
	"github.com/prometheus/client_golang/prometheus"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Import outcomes, the values of the outcome label.
const (
	OutcomeOK      = "ok"
	OutcomePartial = "partial"
	OutcomeFailed  = "failed"
	OutcomeDeleted = "deleted"
	// OutcomeError is an import that could not finish for a reason other
	// than the file (NATS unavailable, say); it is retried.
	OutcomeError = "error"
)

// Metrics are the watcher's counters. A nil *Metrics records nothing.
type Metrics struct {
	imports  *prometheus.CounterVec
	entities *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (if not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		imports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest_orcbrew", Name: "imports_total",
			Help: "OrcBrew bucket objects processed, by outcome (ok, partial, failed, deleted, error).",
		}, []string{"outcome"}),
		entities: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest_orcbrew", Name: "entities_total",
			Help: "Entities published from OrcBrew imports, by kind.",
		}, []string{"kind"}),
	}
	// Both label sets are closed: export each value at zero, so the alert
	// on failed imports sees the first failure's increase.
	for _, o := range []string{OutcomeOK, OutcomePartial, OutcomeFailed, OutcomeDeleted, OutcomeError} {
		m.imports.WithLabelValues(o)
	}
	for _, k := range lkv1.Kinds() {
		m.entities.WithLabelValues(k.Slug())
	}
	if reg != nil {
		reg.MustRegister(m.imports, m.entities)
	}
	return m
}

func (m *Metrics) outcome(o string) {
	if m != nil {
		m.imports.WithLabelValues(o).Inc()
	}
}

func (m *Metrics) entitiesPublished(counts map[string]uint64) {
	if m == nil {
		return
	}
	for k, n := range counts {
		m.entities.WithLabelValues(k).Add(float64(n))
	}
}

package vectorindex

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the vector index's Prometheus collectors, labelled by backend.
// Several Index values may share one Metrics.
type Metrics struct {
	searchDuration *prometheus.HistogramVec
	upserts        *prometheus.CounterVec
	points         *prometheus.GaugeVec
	errors         *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		searchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "vectorindex", Name: "search_duration_seconds",
			Help:    "Time to answer one vector search, by backend.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"backend"}),
		upserts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "vectorindex", Name: "upserts_total",
			Help: "Points inserted or replaced, by backend.",
		}, []string{"backend"}),
		points: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "lorekeeper", Subsystem: "vectorindex", Name: "points",
			Help: "Points in the index after the last write or count, by backend.",
		}, []string{"backend"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "vectorindex", Name: "errors_total",
			Help: "Failed backend calls, by backend and operation.",
		}, []string{"backend", "op"}),
	}
	if reg != nil {
		reg.MustRegister(m.searchDuration, m.upserts, m.points, m.errors)
	}
	return m
}

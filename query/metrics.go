package query

import (
	"github.com/prometheus/client_golang/prometheus"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Metrics are the query service's Prometheus metrics.
type Metrics struct {
	duration  *prometheus.HistogramVec
	results   *prometheus.HistogramVec
	fallbacks *prometheus.CounterVec
	panics    *prometheus.CounterVec
}

// NewMetrics registers the query metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "query", Name: "request_duration_seconds",
			Help:    "Time to answer a query request, by method.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method"}),
		results: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "query", Name: "results",
			Help:    "Results returned per request, by method.",
			Buckets: []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500},
		}, []string{"method"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "query", Name: "fallbacks_total",
			Help: "Semantic queries answered by keyword ranking instead, by reason.",
		}, []string{"reason"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "query", Name: "panics_total",
			Help: "Query requests whose handler panicked (answered Internal; the process goes on), by method.",
		}, []string{"method"}),
	}
	// The reasons are a closed set: export each at zero, so dashboards and
	// alerts read "no fallbacks" rather than "no data".
	for _, r := range []string{"vectors", "vector_index", "no_model", "timeout", "model_error"} {
		m.fallbacks.WithLabelValues(r)
	}
	for _, md := range lkv1.QueryService_ServiceDesc.Methods {
		m.panics.WithLabelValues(md.MethodName)
	}
	if reg != nil {
		reg.MustRegister(m.duration, m.results, m.fallbacks, m.panics)
	}
	return m
}

package open5e

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the resync's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	pages       prometheus.Counter
	published   *prometheus.CounterVec
	fetchErrors *prometheus.CounterVec
	duration    prometheus.Histogram
	lastSuccess *prometheus.GaugeVec
}

var _ Observer = (*Metrics)(nil)

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		pages: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "pages_fetched_total",
			Help: "Open5e API pages read.",
		}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "entities_published_total",
			Help: "Entity events published to the stream, by kind, document and outcome (created, changed, removed, failed).",
		}, []string{"kind", "document", "outcome"}),
		fetchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "fetch_errors_total",
			Help: "Failed Open5e requests (every attempt), by endpoint and status (HTTP code, timeout, connection, malformed, ...).",
		}, []string{"endpoint", "status"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "resync_duration_seconds",
			Help:    "Duration of an Open5e resync.",
			Buckets: prometheus.ExponentialBuckets(0.5, 2, 12),
		}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "last_success_timestamp_seconds",
			Help: "Unix time of the last complete fetch of each Open5e endpoint.",
		}, []string{"endpoint"}),
	}
	reg.MustRegister(m.pages, m.published, m.fetchErrors, m.duration, m.lastSuccess)
	return m
}

// PageFetched counts a page.
func (m *Metrics) PageFetched(string) {
	if m != nil {
		m.pages.Inc()
	}
}

// transportStatuses are the fetch error statuses every endpoint can have
// whatever the server answers; each starts at zero (see initEndpoints).
var transportStatuses = []string{"timeout", "connection"}

// initEndpoints exports the fetch errors of each endpoint at zero, so the
// alert dividing by their rate has data before the first error, and sees
// the first error's increase.
func (m *Metrics) initEndpoints(paths []string) {
	if m == nil {
		return
	}
	for _, p := range paths {
		for _, s := range transportStatuses {
			m.fetchErrors.WithLabelValues(p, s)
		}
	}
}

// FetchFailed counts a failed request.
func (m *Metrics) FetchFailed(endpoint, status string) {
	if m != nil {
		m.fetchErrors.WithLabelValues(endpoint, status).Inc()
	}
}

func (m *Metrics) publishedAdd(kind, document, outcome string) {
	if m != nil {
		m.published.WithLabelValues(kind, document, outcome).Inc()
	}
}

func (m *Metrics) observeDuration(s float64) {
	if m != nil {
		m.duration.Observe(s)
	}
}

func (m *Metrics) succeeded(endpoint string, unix float64) {
	if m != nil {
		m.lastSuccess.WithLabelValues(endpoint).Set(unix)
	}
}

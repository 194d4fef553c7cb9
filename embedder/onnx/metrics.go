package onnx

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the model's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	duration *prometheus.HistogramVec
	texts    *prometheus.CounterVec
	tokens   *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "embed_duration_seconds",
			Help:    "Time to embed one batch of texts (tokenizing excluded).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"model"}),
		texts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "embedded_texts_total",
			Help: "Texts embedded.",
		}, []string{"model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "embedded_tokens_total",
			Help: "Tokens embedded (padding excluded).",
		}, []string{"model"}),
	}
	reg.MustRegister(m.duration, m.texts, m.tokens)
	return m
}

// start exports model's counters at zero, so that "nothing embedded yet"
// is a zero a dashboard or a test can read rather than a missing series.
func (m *Metrics) start(model string) {
	if m == nil {
		return
	}
	m.texts.WithLabelValues(model)
	m.tokens.WithLabelValues(model)
}

func (m *Metrics) observe(model string, texts, tokens int, d time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(model).Observe(d.Seconds())
	m.texts.WithLabelValues(model).Add(float64(texts))
	m.tokens.WithLabelValues(model).Add(float64(tokens))
}

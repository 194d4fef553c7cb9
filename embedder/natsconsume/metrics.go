package natsconsume

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the consumer's Prometheus metrics.
type Metrics struct {
	messages      *prometheus.CounterVec
	batchSize     prometheus.Histogram
	embedDuration prometheus.Histogram
	embedded      prometheus.Counter
	cacheHits     prometheus.Counter
	deadLetters   prometheus.Counter
	pending       prometheus.Gauge
}

// NewMetrics creates the consumer's metrics and registers them on reg,
// which may be nil (metrics are then kept but not exported).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "messages_total",
			Help: "Entity events handled, by outcome: stored, retried, dead_lettered.",
		}, []string{"outcome"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "batch_size_messages",
			Help:    "Messages per fetched batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		embedDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "embed_duration_seconds",
			Help:    "Time for one model call embedding a batch's texts.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		embedded: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "texts_embedded_total",
			Help: "Texts the model embedded.",
		}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "embedding_cache_hits_total",
			Help: "Upserts whose vector came from the embedding cache (content and model unchanged).",
		}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "dead_letters_total",
			Help: "Messages moved to the dead-letter stream.",
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "consumer_pending_messages",
			Help: "Messages on the stream this node has not yet stored and acknowledged (consumer lag).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.batchSize, m.embedDuration, m.embedded, m.cacheHits, m.deadLetters, m.pending)
	}
	return m
}

package natsconsume

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the consumer's Prometheus metrics. The model's own (embed
// duration, texts embedded) are the onnx package's.
type Metrics struct {
	messages    *prometheus.CounterVec
	batchSize   prometheus.Histogram
	cacheHits   prometheus.Counter
	deadLetters prometheus.Counter
	pending     prometheus.Gauge
	inProgress  prometheus.Counter
}

// Outcomes of a message, the messages_total outcome label's values.
var outcomes = []string{"stored", "retried", "dead_lettered"}

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
		inProgress: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "embedder", Name: "in_progress_acks_total",
			Help: "Messages reported to the server as still being worked on (a batch that embeds longer than a third of the ack wait).",
		}),
	}
	// A closed set: export each outcome at zero, so a rate or a ratio over
	// it has data from the first scrape.
	for _, o := range outcomes {
		m.messages.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.batchSize, m.cacheHits, m.deadLetters, m.pending, m.inProgress)
	}
	return m
}

package srd52

import (
	"github.com/prometheus/client_golang/prometheus"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Source is the bundled text as a resync reads it: each run opens it
// (a few milliseconds) and lets the Book go after, so that a node does not
// hold the parsed text between runs.
type Source struct {
	metrics *Metrics
}

// NewSource returns the bundled text as a source; m may be nil.
func NewSource(m *Metrics) *Source { return &Source{metrics: m} }

// Open reads the bundled text (Open), recording what it read.
func (s *Source) Open() (*Book, error) {
	b, err := Open()
	s.metrics.read(b, err)
	if b != nil {
		b.metrics = s.metrics
	}
	return b, err
}

// Metrics are the text's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	entries    *prometheus.GaugeVec
	readErrors prometheus.Counter
	completed  *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "text_entries",
			Help: "What the last read of the SRD 5.2 text found, by part: glossary entries, rules chapters' sections, spells.",
		}, []string{"part"}),
		readErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "text_read_errors_total",
			Help: "Reads of the SRD 5.2 text that failed (the bundled text does not parse).",
		}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "ingest", Name: "text_completions_total",
			Help: "Fields of other sources' records of SRD 5.2 that its text filled or corrected, by kind and field.",
		}, []string{"kind", "field"}),
	}
	reg.MustRegister(m.entries, m.readErrors, m.completed)
	return m
}

func (m *Metrics) read(b *Book, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.readErrors.Inc()
		return
	}
	sections := 0
	for _, c := range b.Rules {
		c.Walk(func(*Section) { sections++ })
	}
	m.entries.WithLabelValues("glossary").Set(float64(len(b.Glossary)))
	m.entries.WithLabelValues("rules").Set(float64(sections))
	m.entries.WithLabelValues("spells").Set(float64(len(b.Spells)))
}

func (m *Metrics) complete(e *lkv1.Entity, field string) {
	if m != nil {
		m.completed.WithLabelValues(e.GetKind().Slug(), field).Inc()
	}
}

package mcpserver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the MCP front end's Prometheus metrics. A nil *Metrics
// records nothing.
type Metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Outcomes of a tool call, the outcome label's values.
const (
	OutcomeOK          = "ok"
	OutcomeInvalid     = "invalid_argument"
	OutcomeUnavailable = "unavailable"
	OutcomeError       = "error"
)

// NewMetrics creates the metrics and registers them with reg (none when
// reg is nil):
//
//	lorekeeper_mcp_tool_calls_total{tool,outcome}
//	lorekeeper_mcp_tool_duration_seconds{tool}
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "mcp", Name: "tool_calls_total",
			Help: "MCP tool calls by tool and outcome (ok, invalid_argument, unavailable, error).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorekeeper", Subsystem: "mcp", Name: "tool_duration_seconds",
			Help:    "MCP tool call latency, query service round trip and rendering included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"tool"}),
	}
	if reg != nil {
		reg.MustRegister(m.calls, m.duration)
	}
	return m
}

// initTools exports every (tool, outcome) pair at zero: a closed set, and
// an error ratio should read 0 on a healthy server, not "no data".
func (m *Metrics) initTools(tools []string) {
	if m == nil {
		return
	}
	for _, t := range tools {
		for _, o := range []string{OutcomeOK, OutcomeInvalid, OutcomeUnavailable, OutcomeError} {
			m.calls.WithLabelValues(t, o)
		}
	}
}

func (m *Metrics) observe(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
}

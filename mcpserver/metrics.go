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
	panics   *prometheus.CounterVec
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
//	lorekeeper_mcp_panics_total{method}
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
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorekeeper", Subsystem: "mcp", Name: "panics_total",
			Help: "MCP requests whose handler panicked (answered with an internal error; the process goes on), by method.",
		}, []string{"method"}),
	}
	// The methods with handlers of our own: "no panics" reads 0, not "no data".
	for _, method := range []string{"tools/call", "prompts/get", "resources/read", "completion/complete"} {
		m.panics.WithLabelValues(method)
	}
	if reg != nil {
		reg.MustRegister(m.calls, m.duration, m.panics)
	}
	return m
}

func (m *Metrics) panicked(method string) {
	if m == nil {
		return
	}
	m.panics.WithLabelValues(method).Inc()
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

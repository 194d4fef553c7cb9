// Package metricsuse lists the metrics LoreKeeper's dashboards and alert
// rules use, by parsing every Grafana panel expression and every Prometheus
// rule expression with Prometheus's own PromQL parser. Tests compare them
// with what the code exports: the deploy module's tests with the Go sources,
// cmd/lorekeeper's end-to-end test with a live /metrics scrape.
package metricsuse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"lorekeeper.dev/deploy"
)

// Expr is one PromQL expression of a dashboard panel or a rule.
type Expr struct {
	// Source says where it is: the file, and the panel and target, or the
	// rule.
	Source string
	// Text is the expression as written.
	Text string
	// Query is Text with Grafana's variables replaced ($__rate_interval:
	// 1m, $__interval: 1m, $__range: 1h), ready for Prometheus's query API.
	Query string
	// Record is the metric a recording rule defines ("" otherwise).
	Record string
}

// Use is one metric selected by one expression.
type Use struct {
	Source string
	// Metric is the selector's metric name as written, such as
	// lorekeeper_mcp_tool_duration_seconds_bucket.
	Metric string
	// Family is the metric family Metric belongs to, as a /metrics scrape
	// names it in its # TYPE line: Metric without a _bucket, _sum or _count
	// suffix.
	Family string
	// Labels are the label names the selector matches on.
	Labels []string
}

// Files read by Expressions, under the deploy module's root.
const (
	rulesFile     = deploy.PrometheusRules
	dashboardsDir = deploy.DashboardsDir
)

// MetricNames returns the metric families (sorted, each once) that the
// dashboards and the alert and recording rules select, without the metrics
// the recording rules themselves define. Histogram and summary series
// (_bucket, _sum, _count) are reported by their family's name.
func MetricNames() ([]string, error) {
	uses, err := Uses()
	if err != nil {
		return nil, err
	}
	return Names(uses), nil
}

// Names returns the families of uses, sorted, each once.
func Names(uses []Use) []string {
	var names []string
	for _, u := range uses {
		names = append(names, u.Family)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// Uses returns every metric selector of the deployment's dashboards and
// rules.
func Uses() ([]Use, error) { return UsesFS(deploy.Files) }

// Expressions returns every expression of the deployment's dashboards and
// rules.
func Expressions() ([]Expr, error) { return ExpressionsFS(deploy.Files) }

// UsesFS is Uses over another tree laid out like deploy/.
func UsesFS(fsys fs.FS) ([]Use, error) {
	exprs, err := ExpressionsFS(fsys)
	if err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, e := range exprs {
		if e.Record != "" {
			recorded[e.Record] = true
		}
	}
	p := parser.NewParser(parser.Options{})
	var uses []Use
	var errs []error
	for _, e := range exprs {
		node, err := p.ParseExpr(e.Query)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q: %w", e.Source, e.Text, err))
			continue
		}
		parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			name, lbls, err := selector(vs)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q: %w", e.Source, e.Text, err))
				return nil
			}
			if recorded[name] {
				return nil
			}
			uses = append(uses, Use{Source: e.Source, Metric: name, Family: Family(name), Labels: lbls})
			return nil
		})
	}
	return uses, errors.Join(errs...)
}

// selector returns the metric name and matched label names of vs.
func selector(vs *parser.VectorSelector) (string, []string, error) {
	name := vs.Name
	var lbls []string
	for _, m := range vs.LabelMatchers {
		if m.Name != model.MetricNameLabel {
			lbls = append(lbls, m.Name)
			continue
		}
		if m.Type != labels.MatchEqual {
			return "", nil, fmt.Errorf("selector %s: the metric name must be a literal", vs)
		}
		name = m.Value
	}
	if name == "" {
		return "", nil, fmt.Errorf("selector %s has no metric name", vs)
	}
	sort.Strings(lbls)
	return name, slices.Compact(lbls), nil
}

// Family returns the metric family of a series name: the name without a
// histogram's or summary's _bucket, _sum or _count suffix.
func Family(metric string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(metric, s); ok && base != "" {
			return base
		}
	}
	return metric
}

// ExpressionsFS is Expressions over another tree laid out like deploy/.
func ExpressionsFS(fsys fs.FS) ([]Expr, error) {
	rules, err := ruleExprs(fsys, rulesFile)
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(fsys, path.Join(dashboardsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no dashboards in %s", dashboardsDir)
	}
	out := rules
	for _, f := range files {
		d, err := dashboardExprs(fsys, f)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	return out, nil
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record string `json:"record"`
			Alert  string `json:"alert"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

func ruleExprs(fsys fs.FS, name string) ([]Expr, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var rf ruleFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []Expr
	for _, g := range rf.Groups {
		for i, r := range g.Rules {
			what := "alert " + r.Alert
			if r.Record != "" {
				what = "record " + r.Record
			}
			src := fmt.Sprintf("%s: group %s rule %d (%s)", name, g.Name, i, what)
			if strings.TrimSpace(r.Expr) == "" {
				return nil, fmt.Errorf("%s: no expr", src)
			}
			out = append(out, Expr{Source: src, Text: r.Expr, Query: r.Expr, Record: r.Record})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rules", name)
	}
	return out, nil
}

func dashboardExprs(fsys fs.FS, name string) ([]Expr, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []Expr
	var errs []error
	var walk func(raw []json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p struct {
				ID      int               `json:"id"`
				Title   string            `json:"title"`
				Panels  []json.RawMessage `json:"panels"` // rows hold panels
				Targets []struct {
					RefID string `json:"refId"`
					Expr  string `json:"expr"`
				} `json:"targets"`
			}
			if err := json.Unmarshal(r, &p); err != nil {
				errs = append(errs, fmt.Errorf("%s: panel: %w", name, err))
				continue
			}
			walk(p.Panels)
			for _, t := range p.Targets {
				src := fmt.Sprintf("%s: panel %d %q target %s", name, p.ID, p.Title, t.RefID)
				if strings.TrimSpace(t.Expr) == "" {
					errs = append(errs, fmt.Errorf("%s: no expr", src))
					continue
				}
				q, err := substitute(t.Expr)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", src, err))
					continue
				}
				out = append(out, Expr{Source: src, Text: t.Expr, Query: q})
			}
		}
	}
	walk(d.Panels)
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no panel expressions", name))
	}
	return out, errors.Join(errs...)
}

// grafanaVars are the values the Grafana variables the dashboards use take
// when an expression is sent to Prometheus directly.
var grafanaVars = map[string]string{
	"__rate_interval": "1m",
	"__interval":      "1m",
	"__range":         "1h",
}

var varRE = regexp.MustCompile(`\$(\{[A-Za-z0-9_]+\}|[A-Za-z0-9_]+)`)

// substitute replaces Grafana's built-in variables; any other variable is
// an error (the dashboards define none).
func substitute(expr string) (string, error) {
	var bad []string
	q := varRE.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v[1:], "{}")
		if val, ok := grafanaVars[name]; ok {
			return val
		}
		bad = append(bad, v)
		return v
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("unknown Grafana variable %s in %q", strings.Join(bad, ", "), expr)
	}
	return q, nil
}

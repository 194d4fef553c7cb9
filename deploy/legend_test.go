package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// outputLabels returns the label names an expression's result series can
// carry, when the expression's shape tells (aggregations with by, and what
// wraps them); known is false otherwise (raw selectors).
func outputLabels(e parser.Expr) (labels []string, known bool) {
	switch e := e.(type) {
	case *parser.ParenExpr:
		return outputLabels(e.Expr)
	case *parser.NumberLiteral:
		return nil, true
	case *parser.AggregateExpr:
		if e.Without {
			return nil, false
		}
		return e.Grouping, true
	case *parser.Call:
		switch e.Func.Name {
		case "time", "vector", "scalar":
			return nil, true
		case "histogram_quantile":
			l, ok := outputLabels(e.Args[1])
			return slices.DeleteFunc(slices.Clone(l), func(s string) bool { return s == "le" }), ok
		}
		for _, a := range e.Args {
			if a.Type() == parser.ValueTypeVector {
				return outputLabels(a)
			}
		}
		return nil, false
	case *parser.BinaryExpr:
		lhs, rhs := e.LHS.Type() == parser.ValueTypeVector, e.RHS.Type() == parser.ValueTypeVector
		switch {
		case lhs && rhs && e.VectorMatching != nil && e.VectorMatching.Card == parser.CardOneToOne && !e.VectorMatching.On:
			return outputLabels(e.LHS) // ignoring(...) with one-to-one: the left side's labels
		case lhs && !rhs:
			return outputLabels(e.LHS)
		case rhs && !lhs:
			return outputLabels(e.RHS)
		case !lhs && !rhs:
			return nil, true
		}
	}
	return nil, false
}

var legendRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// TestDashboards_legends checks that the labels a panel's legend shows
// ({{tool}}) are labels its query's result has: a legend naming a label
// the aggregation dropped renders empty, and the panel then lies.
func TestDashboards_legends(t *testing.T) {
	files, _ := filepath.Glob("grafana/dashboards/*.json")
	p := parser.NewParser(parser.Options{})
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []json.RawMessage `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		var walk func([]json.RawMessage)
		walk = func(raw []json.RawMessage) {
			for _, r := range raw {
				var pn struct {
					Title   string            `json:"title"`
					Panels  []json.RawMessage `json:"panels"`
					Targets []struct {
						Expr, LegendFormat string
					} `json:"targets"`
				}
				if err := json.Unmarshal(r, &pn); err != nil {
					t.Fatal(err)
				}
				walk(pn.Panels)
				for _, tg := range pn.Targets {
					q := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h").Replace(tg.Expr)
					e, err := p.ParseExpr(q)
					if err != nil {
						t.Errorf("%s: %q: %v", f, pn.Title, err)
						continue
					}
					have, known := outputLabels(e)
					if !known {
						continue
					}
					checked++
					for _, m := range legendRE.FindAllStringSubmatch(tg.LegendFormat, -1) {
						if !slices.Contains(have, m[1]) {
							t.Errorf("%s: panel %q: legend shows {{%s}}, but %q keeps only %v", f, pn.Title, m[1], tg.Expr, have)
						}
					}
				}
			}
		}
		walk(d.Panels)
	}
	if checked < 20 {
		t.Errorf("checked %d legends, want at least 20 (is outputLabels still recognising the queries?)", checked)
	}
}

func TestOutputLabels(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for expr, want := range map[string]string{
		`sum by (tool) (rate(x[1m]))`:                                      "tool",
		`histogram_quantile(0.99, sum by (le, tool) (rate(x_bucket[1m])))`: "tool",
		`sum by (a) (rate(x[1m])) / sum by (a) (rate(y[1m]))`:              "a",
		`sort_desc(sum by (document) (increase(x[1h])))`:                   "document",
		`time() - max by (endpoint) (x)`:                                   "endpoint",
		`max by (endpoint) (x) * 1000`:                                     "endpoint",
		`sum(rate(x[1m]))`:                                                 "",
		`rate(x[1m])`:                                                      "?",
	} {
		e, err := p.ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		got, known := outputLabels(e)
		s := strings.Join(got, ",")
		if !known {
			s = "?"
		}
		if s != want {
			t.Errorf("outputLabels(%s) = %q, want %q", expr, s, want)
		}
	}
}

package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// promtool returns the path of Prometheus's promtool. It fails, never
// skips, when promtool is missing: `make tools` installs it (Debian's
// prometheus package).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): run `make tools`, which installs Debian's prometheus package", err)
	}
	return p
}

func runPromtool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	return string(out), err
}

func TestPromtool_checkConfig(t *testing.T) {
	if out, err := runPromtool(t, "check", "config", "prometheus/prometheus.yml"); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

func TestPromtool_checkRules(t *testing.T) {
	out, err := runPromtool(t, "check", "rules", "prometheus/rules.yml")
	if err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool check rules: no SUCCESS in %q", out)
	}
}

// TestPromtool_testRules runs the alerts' unit tests
// (prometheus/rules_test.yml): each alert fires on the series that should
// raise it, with its labels and annotations, and not on healthy ones.
func TestPromtool_testRules(t *testing.T) {
	if out, err := runPromtool(t, "test", "rules", "prometheus/rules_test.yml"); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// TestPromtool_failsOnMistakes shows the checks above can fail: promtool
// rejects a broken rule, and a unit test expecting an alert that does not
// fire.
func TestPromtool_failsOnMistakes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum(rate(x[5m])\n")
	if out, err := runPromtool(t, "check", "rules", bad); err == nil {
		t.Errorf("promtool check rules accepted a broken expression:\n%s", out)
	}
	rules, err := os.ReadFile("prometheus/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	write("rules.yml", string(rules))
	wrong := write("wrong_test.yml", `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'lorekeeper_embedder_dead_letters_total{instance="a"}'
        values: '0x60'
    alert_rule_test:
      - eval_time: 30m
        alertname: LoreKeeperDeadLetters
        exp_alerts:
          - exp_labels: {severity: warning, instance: a}
`)
	if out, err := runPromtool(t, "test", "rules", wrong); err == nil {
		t.Errorf("promtool test rules passed a test whose alert cannot fire:\n%s", out)
	}
}

// TestRules_documentedAndTested checks every alert has a severity and a
// summary, and a unit test in rules_test.yml that expects it to fire.
func TestRules_documentedAndTested(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	readYAML(t, "prometheus/rules.yml", &rules)
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	readYAML(t, "prometheus/rules_test.yml", &tests)
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			if !fires[r.Alert] {
				t.Errorf("%s: no test in rules_test.yml expects it to fire", r.Alert)
			}
		}
	}
	if n == 0 {
		t.Error("no alerts in rules.yml")
	}
}

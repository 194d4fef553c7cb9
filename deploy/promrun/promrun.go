// Package promrun runs a real Prometheus server (Debian's prometheus
// package, installed by `make tools`) that scrapes given targets and
// evaluates the deployment's alert rules, for end-to-end tests: start
// `lorekeeper up`, point a Server at its metrics address, wait for a scrape,
// and query every dashboard expression (metricsuse.Expressions).
package promrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"lorekeeper.dev/deploy"
)

// ErrNotInstalled is returned by Start when no prometheus binary is found.
var ErrNotInstalled = errors.New("prometheus not found: run `make tools` (Debian's prometheus package)")

// Options tune Start. A nil *Options means the defaults.
type Options struct {
	// Binary is the prometheus executable (default: "prometheus" on PATH).
	Binary string
	// ScrapeInterval is how often targets are scraped and rules evaluated
	// (default 1s).
	ScrapeInterval time.Duration
	// Job is the job label of the targets (default "lorekeeper").
	Job string
	// Stderr receives Prometheus's log (default: discarded).
	Stderr io.Writer
}

// Server is a running Prometheus.
type Server struct {
	// URL is its HTTP API's base, such as http://127.0.0.1:40123.
	URL  string
	cmd  *exec.Cmd
	done chan error
}

// Start runs Prometheus with its data in dir (a fresh directory, such as
// t.TempDir()), scraping the metrics of targets (host:port, path /metrics)
// and loading prometheus/rules.yml. It returns once Prometheus is ready;
// ctx bounds the wait. Close stops it.
func Start(ctx context.Context, dir string, targets []string, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Binary == "" {
		o.Binary = "prometheus"
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.Job == "" {
		o.Job = "lorekeeper"
	}
	bin, err := exec.LookPath(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotInstalled, err)
	}
	rules, err := deploy.Files.ReadFile(deploy.PrometheusRules)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), rules, 0o644); err != nil {
		return nil, err
	}
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = fmt.Sprintf("%q", t)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
rule_files: [rules.yml]
scrape_configs:
  - job_name: %[2]q
    static_configs:
      - targets: [%[3]s]
`, o.ScrapeInterval, o.Job, strings.Join(quoted, ", "))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = o.Stderr, o.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Close() // the readiness error is the one to report
		return nil, err
	}
	return s, nil
}

// freeAddr picks a free loopback port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("prometheus exited before it was ready: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("prometheus not ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops Prometheus and waits for it to exit.
func (s *Server) Close() error {
	if s.cmd.Process == nil {
		return nil
	}
	// Prometheus exits on an interrupt with a status that says so: its
	// exit error is expected, not worth reporting.
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return fmt.Errorf("stop prometheus: %w", err)
	}
	select {
	case err := <-s.done:
		_ = err
	case <-time.After(10 * time.Second):
		if err := s.cmd.Process.Kill(); err != nil {
			return fmt.Errorf("kill prometheus: %w", err)
		}
		err := <-s.done
		_ = err
	}
	return nil
}

// Sample is one series of an instant query's result.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

// Query runs an instant query and returns its series (vector results; a
// scalar comes back as one series without labels).
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	form := url.Values{"query": {expr}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v1/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var body struct {
		Status    string          `json:"status"`
		Error     string          `json:"error"`
		ErrorType string          `json:"errorType"`
		Data      json.RawMessage `json:"data"`
	}
	if err := s.get(req, &body); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %q: %s: %s", expr, body.ErrorType, body.Error)
	}
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body.Data, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var out []Sample
		err := json.Unmarshal(data.Result, &out)
		return out, err
	case "scalar":
		var v [2]any
		err := json.Unmarshal(data.Result, &v)
		return []Sample{{Value: v}}, err
	}
	return nil, fmt.Errorf("query %q: result type %s", expr, data.ResultType)
}

// Rule is one loaded rule and its state.
type Rule struct {
	Name   string `json:"name"`
	Type   string `json:"type"`   // alerting or recording
	Health string `json:"health"` // ok, err, unknown
	State  string `json:"state"`  // alerting rules: inactive, pending, firing
	Error  string `json:"lastError"`
}

// Rules returns the rules Prometheus loaded, with their health.
func (s *Server) Rules(ctx context.Context) ([]Rule, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/rules", nil)
	if err != nil {
		return nil, err
	}
	var body struct {
		Data struct {
			Groups []struct {
				Rules []Rule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := s.get(req, &body); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	var out []Rule
	for _, g := range body.Data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// WaitFor polls expr until it returns at least one series, or ctx ends.
func (s *Server) WaitFor(ctx context.Context, expr string) ([]Sample, error) {
	for {
		got, err := s.Query(ctx, expr)
		if err == nil && len(got) > 0 {
			return got, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("no series")
			}
			return nil, fmt.Errorf("waiting for %q: %w (%v)", expr, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) get(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("HTTP %d: %w: %.200s", resp.StatusCode, err, b)
	}
	return nil
}

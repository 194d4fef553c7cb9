package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestOps_Pprof: the profiler is on the metrics listener only when --pprof
// (or LOREKEEPER_PPROF) asks for it.
func TestOps_Pprof(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
		want int
	}{
		{name: "off by default", want: http.StatusNotFound},
		{name: "flag", args: []string{"--pprof"}, want: http.StatusOK},
		{name: "environment", env: "true", want: http.StatusOK},
		{name: "flag beats environment", env: "true", args: []string{"--pprof=false"}, want: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("LOREKEEPER_PPROF", tt.env)
			}
			var cfg upConfig
			fs := newFlagSet("up", upUsage, io.Discard)
			cfg.register(fs)
			if err := fs.parse(append([]string{"--metrics-addr", "127.0.0.1:0"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			ops, err := startOps(cfg.metricsAddr, cfg.ops, newRegistry(), &readiness{}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ops.close(t.Context()) })
			resp, err := http.Get("http://" + ops.addr() + "/debug/pprof/heap?debug=1")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("GET /debug/pprof/heap: %d, want %d", resp.StatusCode, tt.want)
			}
			if resp, err := http.Get("http://" + ops.addr() + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET /metrics: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}
		})
	}
}

// TestOps_HostGuard: the metrics listener answers loopback names and IP
// addresses, and names listed in --metrics-allowed-hosts, on every path;
// any other name is refused 403 (the row 8: Host evil.example read
// /debug/pprof/cmdline, token included).
func TestOps_HostGuard(t *testing.T) {
	var cfg upConfig
	fs := newFlagSet("up", upUsage, io.Discard)
	cfg.register(fs)
	if err := fs.parse([]string{"--metrics-addr", "127.0.0.1:0", "--pprof", "--metrics-allowed-hosts", "query1,Prom.Example:9100"}); err != nil {
		t.Fatal(err)
	}
	ops, err := startOps(cfg.metricsAddr, cfg.ops, newRegistry(), &readiness{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ops.close(t.Context()) })
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:7410", http.StatusOK},
		{"localhost:7410", http.StatusOK},
		{"[::1]:7410", http.StatusOK},
		{"10.1.2.3:7410", http.StatusOK},
		{"[fd00::5]:7410", http.StatusOK},
		{"query1:7410", http.StatusOK},
		{"prom.example:9100", http.StatusOK},
		{"evil.example", http.StatusForbidden},
		{"evil.example:7410", http.StatusForbidden},
		{"localhost.evil.example", http.StatusForbidden},
		{"app.localhost", http.StatusForbidden},
		{"prom.example:9200", http.StatusForbidden},
		{"127.0.0.1.nip.io", http.StatusForbidden},
	} {
		for _, path := range []string{"/metrics", "/healthz", "/readyz", "/debug/pprof/cmdline"} {
			req, err := http.NewRequest(http.MethodGet, "http://"+ops.addr()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %s, GET %s: %d, want %d", tc.host, path, resp.StatusCode, tc.want)
			}
		}
	}
}

// TestOps_CmdlineRedactsToken: /debug/pprof/cmdline shows the command line
// with the MCP token's value redacted, however the flag was written.
func TestOps_CmdlineRedactsToken(t *testing.T) {
	args := os.Args
	t.Cleanup(func() { os.Args = args })
	os.Args = []string{"lorekeeper", "up", "--pprof", "--mcp-token", "s3cret-one", "--mcp-token=s3cret-two", "-mcp-token", "s3cret-three", "-mcp-token=s3cret-four", "--mcp-token-file", "/run/secrets/t", "--", "--mcp-token", "not-a-flag"}
	ops, err := startOps("127.0.0.1:0", opsFlags{pprof: true}, newRegistry(), &readiness{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ops.close(t.Context()) })
	resp, err := http.Get("http://" + ops.addr() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(string(b), "\x00")
	want := []string{"lorekeeper", "up", "--pprof", "--mcp-token", "REDACTED", "--mcp-token=REDACTED", "-mcp-token", "REDACTED", "-mcp-token=REDACTED", "--mcp-token-file", "/run/secrets/t", "--", "--mcp-token", "not-a-flag"}
	if !slices.Equal(got, want) {
		t.Errorf("cmdline:\n got %q\nwant %q", got, want)
	}
}

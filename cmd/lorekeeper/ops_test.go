package main

import (
	"io"
	"log/slog"
	"net/http"
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
			ops, err := startOps(cfg.metricsAddr, cfg.pprof, newRegistry(), &readiness{}, slog.New(slog.DiscardHandler))
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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/mcpserver"
)

// newRegistry is the one registry a process exports; every role registers
// its metrics on it.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// readiness collects named checks; /readyz passes only when all pass.
type readiness struct {
	mu     sync.Mutex
	checks map[string]func(context.Context) error
}

func (r *readiness) add(name string, check func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checks == nil {
		r.checks = map[string]func(context.Context) error{}
	}
	r.checks[name] = check
}

// expect names checks a role will add once it has started, so that
// /readyz does not pass in between: until added, each fails.
func (r *readiness) expect(names ...string) {
	for _, name := range names {
		r.add(name, func(context.Context) error { return errors.New("not started yet") })
	}
}

// serving is a listener's readiness: ready from the moment it serves until
// its shutdown starts.
type serving struct{ on atomic.Bool }

func (s *serving) set(on bool) { s.on.Store(on) }

func (s *serving) check(context.Context) error {
	if !s.on.Load() {
		return errors.New("not serving")
	}
	return nil
}

func (r *readiness) run(ctx context.Context) map[string]string {
	r.mu.Lock()
	checks := make(map[string]func(context.Context) error, len(r.checks))
	for k, v := range r.checks {
		checks[k] = v
	}
	r.mu.Unlock()
	out := make(map[string]string, len(checks))
	for name, check := range checks {
		if err := check(ctx); err != nil {
			out[name] = err.Error()
		} else {
			out[name] = "ok"
		}
	}
	return out
}

// ready reports whether every check passes.
func (r *readiness) ready(ctx context.Context) bool {
	for _, v := range r.run(ctx) {
		if v != "ok" {
			return false
		}
	}
	return true
}

// awaitReady returns nil once every check of r passes, polling every
// interval, or ctx's error if it ends first.
func awaitReady(ctx context.Context, r *readiness, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for !r.ready(ctx) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// opsServer serves /metrics, /healthz (the process is up) and /readyz
// (every readiness check passes) on addr, and Go's profiler under
// /debug/pprof/ when asked (--pprof): profiles show the process's code and
// data, so they are off unless an operator turns them on.
type opsServer struct {
	srv *http.Server
	ln  net.Listener
}

func startOps(addr string, of opsFlags, reg *prometheus.Registry, ready *readiness, log *slog.Logger) (*opsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener on %s: %w (set --metrics-addr)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		results := ready.run(ctx)
		status := http.StatusOK
		for _, v := range results {
			if v != "ok" {
				status = http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(results) // the client went away
	})
	if of.pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s := &opsServer{srv: &http.Server{Handler: hostGuard(mux, splitList(of.hosts)), ReadHeaderTimeout: 5 * time.Second}, ln: ln}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

func (s *opsServer) addr() string { return s.ln.Addr().String() }

func (s *opsServer) close(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// opsFlags configure the metrics listener besides its address.
type opsFlags struct {
	pprof bool
	hosts string
}

func (o *opsFlags) register(fs *flagSet) {
	fs.Bool(&o.pprof, "pprof", false, "also serve Go's profiler under /debug/pprof/ on the metrics listener")
	fs.String(&o.hosts, "metrics-allowed-hosts", "", "comma-separated Host names the metrics listener accepts besides loopback names and IP addresses (DNS-rebinding protection), e.g. the name Prometheus scrapes it by")
}

// hostGuard refuses a request whose Host header names a host other than
// a loopback one or one of allowed, with the MCP listener's check: else a
// web page whose name an attacker points at this machine (DNS rebinding)
// could read the metrics, and with --pprof the command line and memory.
// An IP address is accepted too: rebinding needs a name, and Prometheus
// and Kubernetes probes reach a pod by its address.
func hostGuard(next http.Handler, allowed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if net.ParseIP(strings.Trim(host, "[]")) == nil && !mcpserver.HostAllowed(r.Host, allowed) {
			http.Error(w, "Forbidden: Host header not allowed (list the name in --metrics-allowed-hosts)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secretFlags are the flags whose values are secrets: cmdline shows them
// redacted.
var secretFlags = []string{"mcp-token"}

// cmdline is pprof's /debug/pprof/cmdline with the values of secretFlags
// redacted.
func cmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, strings.Join(redactArgs(os.Args), "\x00"))
}

// redactArgs is args with the value of every secret flag replaced, given
// as --flag=value or --flag value (one dash or two).
func redactArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !slices.Contains(secretFlags, name) {
			continue
		}
		if hasValue {
			out[i] = a[:strings.Index(a, "=")+1] + "REDACTED"
		} else if i+1 < len(out) {
			i++
			out[i] = "REDACTED"
		}
	}
	return out
}

// catalogueCheck is the readiness of a process that both ingests and
// serves (up): the Open5e resync has reached every endpoint at least once
// (a fresh start, or a restart after a crash in the first run, publishes
// the catalogue first), and the node has stored everything the stream held
// at that moment, messages redelivered after a crash included. Once it
// passes it stays passed; the replica's own check covers the lag after.
type catalogueCheck struct {
	js      jetstream.JetStream
	fetcher *open5e.Fetcher
	durable string

	mu     sync.Mutex
	target uint64 // stream sequence to have stored; 0 until known
	done   bool
}

func (c *catalogueCheck) check(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	if c.target == 0 {
		states, err := c.fetcher.State(ctx)
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.GetLastAttempt() == nil {
				return fmt.Errorf("the Open5e resync has not reached %s yet", s.GetEndpoint())
			}
		}
		stream, err := c.js.Stream(ctx, ingest.StreamName)
		if err != nil {
			return err
		}
		info, err := stream.Info(ctx)
		if err != nil {
			return err
		}
		if c.target = info.State.LastSeq; c.target == 0 {
			c.done = true
			return nil
		}
	}
	cons, err := c.js.Consumer(ctx, ingest.StreamName, c.durable)
	if err != nil {
		return err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	if floor := info.AckFloor.Stream; floor < c.target {
		return fmt.Errorf("stored the stream up to message %d of %d", floor, c.target)
	}
	c.done = true
	return nil
}

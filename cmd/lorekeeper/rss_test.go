package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// BenchmarkRSS builds the binary and reports its resident memory in MB:
// `lorekeeper up` on an empty data directory (embedded NATS, the bundled
// snapshot, the model), at its peak during the first load and in steady
// state after it; then `lorekeeper node` alone on an empty Badger
// directory, loading the stream up left (served by an in-process NATS
// server on up's store). Each load embeds the whole catalogue: minutes on
// a busy machine. -short skips it.
func BenchmarkRSS(b *testing.B) {
	if testing.Short() {
		b.Skip("runs the binary through two full loads")
	}
	bin := filepath.Join(b.TempDir(), "lorekeeper")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	modelDir := testModelDir(b)
	for b.Loop() {
		dir := b.TempDir()
		up := startBinary(b, bin, regexp.MustCompile(`gRPC query service:\s+(\S+)`), "up",
			"--data-dir", dir, "--nats-listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--grpc-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--model-dir", modelDir,
			"--orcbrew-dir", filepath.Join(dir, "orcbrew"))
		natsURL := up.match(b, regexp.MustCompile(`NATS:\s+(\S+)`))
		peak, steady, took := up.measureLoad(b, func() uint64 { return streamMsgs(b, natsURL, dir) })
		b.ReportMetric(peak, "up-peak-MB")
		b.ReportMetric(steady, "up-steady-MB")
		b.ReportMetric(took.Seconds(), "up-load-s")
		up.stop(b)

		ns, err := embeddedNATS(dir, "127.0.0.1:0", "", slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		msgs := streamMsgs(b, ns.ClientURL(), "")
		node := startBinary(b, bin, regexp.MustCompile(`query service listening.* addr=(\S+)`), "node",
			"--nats-url", ns.ClientURL(), "--data-dir", b.TempDir(), "--consumer", "rss-bench",
			"--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--model-dir", modelDir)
		peak, steady, took = node.measureLoad(b, func() uint64 { return msgs })
		b.ReportMetric(peak, "node-peak-MB")
		b.ReportMetric(steady, "node-steady-MB")
		b.ReportMetric(took.Seconds(), "node-load-s")
		node.stop(b)
		ns.Shutdown()
		ns.WaitForShutdown()
	}
}

// BenchmarkFirstLoad builds the binary and reports, for `lorekeeper up` on
// the bundled catalogue: the first load on an empty data directory (start
// to /readyz, seconds, and the peak resident set by then, MB), a restart,
// a rebuild after the store was deleted (rm -rf data/badger), and one
// after bytes of a table were flipped (the store set aside as damaged).
// The rebuilds replay the stream; their vectors come from the bundle.
// -short skips it.
func BenchmarkFirstLoad(b *testing.B) {
	if testing.Short() {
		b.Skip("runs the binary through a first load and three restarts")
	}
	bin := buildBinary(b)
	st, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	modelDir := testModelDir(b)
	for b.Loop() {
		b.ReportMetric(float64(st.Size())/1e6, "binary-MB")
		dir := b.TempDir()
		up := func(what string) {
			start := time.Now()
			p := startBinary(b, bin, regexp.MustCompile(`gRPC query service:\s+(\S+)`), "up",
				"--data-dir", dir, "--nats-listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
				"--grpc-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--model-dir", modelDir,
				"--orcbrew-dir", filepath.Join(dir, "orcbrew"))
			readyz := "http://" + p.match(b, regexp.MustCompile(`metrics and health:\s+http://(\S+)/metrics`)) + "/readyz"
			// A bound, not a timing assertion.
			for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%s: not ready after 30 minutes:\n%s", what, p.output())
				}
				if resp, err := http.Get(readyz); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
				}
			}
			b.ReportMetric(time.Since(start).Seconds(), what+"-s")
			if what == "first" {
				b.ReportMetric(procStatusMB(b, p.cmd.Process.Pid, "VmHWM"), "first-peak-MB")
			}
			p.stop(b)
		}
		up("first")
		up("restart")
		if err := os.RemoveAll(filepath.Join(dir, "badger")); err != nil {
			b.Fatal(err)
		}
		up("rebuild-deleted")
		tables, _ := filepath.Glob(filepath.Join(dir, "badger", "*.sst"))
		if len(tables) == 0 {
			b.Fatal("no table files to damage")
		}
		slices.Sort(tables)
		flipBytes(b, tables[0])
		up("rebuild-damaged")
	}
}

// flipBytes flips 8 bytes in the middle of the file at path.
func flipBytes(tb testing.TB, path string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	for i := len(data) / 2; i < len(data)/2+8; i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// binary is a running lorekeeper process whose output is searched for
// the query service's address.
type binary struct {
	cmd  *exec.Cmd
	grpc string
	dir  string // its --data-dir

	mu  sync.Mutex
	out bytes.Buffer // stdout and stderr
}

func (p *binary) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *binary) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func startBinary(b *testing.B, bin string, grpcAddr *regexp.Regexp, args ...string) *binary {
	b.Helper()
	p := &binary{cmd: exec.Command(bin, args...)}
	if i := slices.Index(args, "--data-dir"); i >= 0 && i+1 < len(args) {
		p.dir = args[i+1]
	}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	startChild(b, p.cmd)
	p.grpc = p.match(b, grpcAddr)
	return p
}

// match waits up to a minute for re in the output and returns its group.
func (p *binary) match(b *testing.B, re *regexp.Regexp) string {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m[1]
		}
	}
	b.Fatalf("%s: no %q in its output:\n%s", p.cmd.Args[1], re, p.output())
	return ""
}

// measureLoad waits until the node has stored everything on the stream
// (want() messages) and says so three times in a row, then lets it idle.
// It returns the peak resident set since the start and the median of ten
// samples a second apart after 20 s idle, in MB, and how long the load
// took from the first status call (seconds after the start).
func (p *binary) measureLoad(b *testing.B, want func() uint64) (peak, steady float64, took time.Duration) {
	b.Helper()
	start := time.Now()
	conn, client, err := dialQuery(p.grpc, nil, testToken(b, p.dir, grpcToken))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ok := 0
	// A bound, not a timing assertion: the first load embeds everything.
	for deadline := time.Now().Add(30 * time.Minute); ok < 3; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			b.Fatalf("%s not caught up after 30 minutes:\n%s", p.cmd.Args[1], p.output())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := client.Status(ctx, &lkv1.StatusRequest{})
		cancel()
		if err == nil && s.GetEntities() > 0 && s.GetPending() == 0 && want() <= s.GetEntities() {
			ok++
		} else {
			ok = 0
		}
	}
	took = time.Since(start)
	time.Sleep(20 * time.Second)
	var samples []float64
	for range 10 {
		samples = append(samples, procStatusMB(b, p.cmd.Process.Pid, "VmRSS"))
		time.Sleep(time.Second)
	}
	slices.Sort(samples)
	return procStatusMB(b, p.cmd.Process.Pid, "VmHWM"), samples[len(samples)/2], took
}

// stop ends the process as Ctrl-C does and waits for it.
func (p *binary) stop(b *testing.B) {
	b.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-done
		b.Fatalf("%s did not stop on SIGINT:\n%s", p.cmd.Args[1], p.output())
	}
}

// procStatusMB reads a kB field of /proc/<pid>/status, in MB.
func procStatusMB(b *testing.B, pid int, field string) float64 {
	b.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

var _ io.Writer = (*binary)(nil)

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// loadQuestions are what the sessions of BenchmarkMCPLoad ask, in turn: a
// DM's questions that name no book.
var loadQuestions = []struct {
	tool string
	args map[string]any
}{
	{"search_dnd_content", map[string]any{"query": "fire damage"}},
	{"lookup_spell", map[string]any{"name": "fireball"}},
	{"lookup_creature", map[string]any{"cr": 5, "type": "undead"}},
	{"search_dnd_content", map[string]any{"query": "a spell that stops enemies from moving"}},
	{"lookup_equipment", map[string]any{"type": "magic-item", "rarity": "rare"}},
	{"lookup_rule", map[string]any{"rule_type": "condition", "name": "grappled"}},
	{"lookup_creature", map[string]any{"name": "goblin"}},
	{"list_documents", map[string]any{}},
}

// BenchmarkMCPLoad (issue 49) runs lorekeeper up with the whole catalogue,
// then N = 1, 8, 32 and 64 MCP sessions (the SDK client over streamable
// HTTP), each asking loadQuestions in a loop for LOREKEEPER_BENCH_LOAD_SECONDS
// (default 15), after a warm-up, and prints calls/s, p50, p99, errors, and
// the resident set before the run and after it (the median of five
// samples, the sessions closed and the process idle 15 s). It fails on any error, and on a
// resident set after the run more than 10 % over the one before. -short
// skips it (a whole first load).
func BenchmarkMCPLoad(b *testing.B) {
	if testing.Short() {
		b.Skip("runs the binary through a whole first load")
	}
	seconds := 15
	if v, err := strconv.Atoi(os.Getenv("LOREKEEPER_BENCH_LOAD_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	bin := filepath.Join(b.TempDir(), "lorekeeper")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for b.Loop() {
		dir := b.TempDir()
		up := startBinary(b, bin, regexp.MustCompile(`gRPC query service:\s+(\S+)`), "up",
			"--data-dir", dir, "--nats-listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--grpc-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--model-dir", testModelDir(b),
			"--orcbrew-dir", filepath.Join(dir, "orcbrew"))
		natsURL := up.match(b, regexp.MustCompile(`NATS:\s+(\S+)`))
		url := up.match(b, regexp.MustCompile(`MCP \(streamable HTTP\):\s+(\S+)`))
		up.measureLoad(b, func() uint64 { return streamMsgs(b, natsURL, dir) })
		pid := up.cmd.Process.Pid
		// The first questions fill the caches and the embedding runtime's
		// working memory: what a leak is measured from is the warm process.
		cold := medianRSS(b, pid, 5)
		if res := loadRun(b, url, 1, 5*time.Second); res.errors > 0 {
			b.Errorf("warm-up: %d errors, e.g. %q", res.errors, res.firstErrors)
		}
		time.Sleep(15 * time.Second)
		fmt.Printf("\nBenchmarkMCPLoad: %d s a run, the whole catalogue (RSS %.0f MB cold, %.0f MB after a warm-up of 5 s with one session)\n%8s %9s %9s %9s %7s %11s %10s\n",
			seconds, cold, medianRSS(b, pid, 5), "sessions", "calls/s", "p50", "p99", "errors", "RSS before", "RSS after")
		for _, n := range []int{1, 8, 32, 64} {
			before := medianRSS(b, pid, 5)
			res := loadRun(b, url, n, time.Duration(seconds)*time.Second)
			time.Sleep(15 * time.Second)
			after := medianRSS(b, pid, 5)
			p50, p99 := percentiles(res.latencies)
			fmt.Printf("%8d %9.1f %9s %9s %7d %8.0f MB %7.0f MB\n", n, float64(res.calls)/float64(seconds),
				p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), res.errors, before, after)
			b.ReportMetric(float64(res.calls)/float64(seconds), fmt.Sprintf("calls/s@%d", n))
			if res.errors > 0 {
				b.Errorf("%d sessions: %d errors of %d calls, e.g. %q", n, res.errors, res.calls, res.firstErrors)
			}
			if after > 1.1*before {
				b.Errorf("%d sessions: the resident set grew from %.0f to %.0f MB, more than 10 %%", n, before, after)
			}
		}
		up.stop(b)
	}
}

// loadRun runs n sessions asking loadQuestions in a loop for d.
func loadRun(b *testing.B, url string, n int, d time.Duration) loadResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return mcpLoad(b, ctx, url, n, func(k int) (string, map[string]any) {
		q := loadQuestions[k%len(loadQuestions)]
		return q.tool, q.args
	}, 0, nil)
}

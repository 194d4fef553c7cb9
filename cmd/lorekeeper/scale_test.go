package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lorekeeper.dev/ingest/orcbrew/homebrewgen"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// BenchmarkScale's settings come from the environment, not flags: make
// bench passes its flags to every package's test binary.
const (
	// scaleHomebrewEnv: synthetic homebrew entities (half spells, half
	// monsters) on top of the catalogue, one store per comma-separated
	// count. Default 0,10000 (the 6k and 16k stores); 0,10000,40000 adds
	// the 46k store, whose load takes many minutes.
	scaleHomebrewEnv = "LOREKEEPER_BENCH_SCALE_HOMEBREW"
	// scaleBinEnv: the lorekeeper binary to measure (default: built from
	// this tree), to compare another build.
	scaleBinEnv = "LOREKEEPER_BENCH_SCALE_BIN"
)

// scaleCalls are the calls BenchmarkScale times through the TypeScript SDK
// client, each 400 times (20 of them warm-up).
var scaleCalls = []struct {
	name string
	tool string
	args map[string]any
}{
	{"lookup_spell {name:fireball}", "lookup_spell", map[string]any{"name": "fireball"}},
	{"lookup_spell {level:3, school:evocation, limit:10}", "lookup_spell", map[string]any{"level": 3, "school": "evocation", "limit": 10}},
	{"lookup_spell {semantic_query, limit:10}", "lookup_spell", map[string]any{"semantic_query": "stop enemies from moving", "limit": 10}},
	{"lookup_creature {semantic_query, limit:10}", "lookup_creature", map[string]any{"semantic_query": "a flying beast that breathes fire", "limit": 10}},
	{"search_dnd_content {query, limit:10}", "search_dnd_content", map[string]any{"query": "dragon breath", "limit": 10}},
	{"list_documents {limit:1}", "list_documents", map[string]any{"limit": 1}},
}

// scaleRow is one store's figures.
type scaleRow struct {
	entities                     uint64
	loadRate                     float64 // entities/s
	peakMB, steadyMB, afterMB    float64
	restart                      time.Duration // SIGINT to /readyz 200 on the same data
	listenAfter                  time.Duration // restart to the MCP listener accepting
	idleCPU                      float64       // % of a core
	p50, p99                     map[string]float64
	homebrewFiles, homebrewBytes int
}

// BenchmarkScale measures cost against the size of the store: for each
// count in LOREKEEPER_BENCH_SCALE_HOMEBREW (default 0,10000), it writes that many synthetic
// homebrew entities (homebrewgen, recombined from the bundled catalogue's
// texts) into the OrcBrew folder of a fresh `lorekeeper up`, and reports
// the load rate, the peak RSS during the load, RSS steady and after 2,400
// MCP calls through the TypeScript SDK client, the calls' p50/p99, idle
// CPU with the folder watched, and a restart's time to /readyz 200. It
// prints the table at the end. Each store loads (embeds) everything:
// minutes per 10,000 entities on a busy machine. -short skips it.
func BenchmarkScale(b *testing.B) {
	if testing.Short() {
		b.Skip("loads whole stores")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node not found: the TypeScript SDK client needs Node.js")
	}
	client := tsClient(b)
	bin := os.Getenv(scaleBinEnv)
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "lorekeeper")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	sizes := cmp.Or(os.Getenv(scaleHomebrewEnv), "0,10000")
	var counts []int
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			b.Fatalf("%s=%q: want comma-separated counts of homebrew entities (0,10000,40000)", scaleHomebrewEnv, sizes)
		}
		counts = append(counts, n)
	}
	modelDir := testModelDir(b)
	for b.Loop() {
		var rows []scaleRow
		for _, n := range counts {
			rows = append(rows, scaleStore(b, bin, modelDir, node, client, n))
		}
		printScale(rows)
	}
}

// tsClient returns the TypeScript SDK client's folder, installed.
func tsClient(b *testing.B) string {
	client, err := filepath.Abs(filepath.Join("testdata", "tsclient"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(client, "node_modules")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			b.Skip("npm not found: installing the TypeScript SDK client needs it")
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = client
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("npm ci in %s: %v\n%s", client, err, out)
		}
	}
	return client
}

func scaleStore(b *testing.B, bin, modelDir, node, client string, homebrew int) scaleRow {
	dir := b.TempDir()
	brew := filepath.Join(dir, "orcbrew")
	if err := os.MkdirAll(brew, 0o755); err != nil {
		b.Fatal(err)
	}
	row := scaleRow{}
	if homebrew > 0 {
		// 16 files as the measurement had (≈ 6 MB each at 40,000).
		paths, err := homebrewgen.WriteDir(brew, homebrewgen.Options{Spells: homebrew / 2, Monsters: homebrew - homebrew/2, Files: 16, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		row.homebrewFiles = len(paths)
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			row.homebrewBytes += int(st.Size())
		}
	}
	args := []string{"up", "--data-dir", dir, "--nats-listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--grpc-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--model-dir", modelDir, "--orcbrew-dir", brew}
	up := startBinary(b, bin, regexp.MustCompile(`gRPC query service:\s+(\S+)`), args...)
	natsURL := up.match(b, regexp.MustCompile(`NATS:\s+(\S+)`))
	mcpURL := up.match(b, regexp.MustCompile(`MCP \(streamable HTTP\):\s+(\S+)`))
	// The load is done when the store holds what the stream does and at
	// least the homebrew written (the folder's import may start after the
	// catalogue's sync).
	peak, steady, took := up.measureLoad(b, func() uint64 { return max(streamMsgs(b, natsURL, dir), uint64(homebrew)) })
	row.entities = statusEntities(b, up.grpc, dir)
	row.loadRate = float64(row.entities) / took.Seconds()
	row.peakMB, row.steadyMB = peak, steady

	row.p50, row.p99 = scaleTraffic(b, node, client, mcpURL)
	time.Sleep(5 * time.Second)
	row.afterMB = medianRSS(b, up.cmd.Process.Pid, 5)
	// Over 30 s: idle work comes in bursts (the runtime's forced
	// collection every two minutes among them), which a short window
	// holds or misses.
	row.idleCPU = idleCPU(b, up.cmd.Process.Pid, 30*time.Second)

	metricsAddr := up.match(b, regexp.MustCompile(`metrics and health:\s+http://(\S+)/metrics`))
	up.stop(b)
	// The same data again, on the ports it had, so /readyz can be polled
	// from the moment the process starts.
	mcpAddr := strings.TrimSuffix(strings.TrimPrefix(mcpURL, "http://"), "/mcp")
	start := time.Now()
	again := exec.Command(bin, replaceFlags(args, map[string]string{"--metrics-addr": metricsAddr, "--mcp-addr": mcpAddr})...)
	p := &binary{cmd: again}
	again.Stdout, again.Stderr = p, p
	startChild(b, again)
	listening := false
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("restart: /readyz not 200 after 5 minutes:\n%s", p.output())
		}
		if !listening {
			if c, err := (&http.Client{Timeout: time.Second}).Get(mcpURL); err == nil {
				c.Body.Close()
				listening = true
				row.listenAfter = time.Since(start)
			}
		}
		r, err := (&http.Client{Timeout: time.Second}).Get("http://" + metricsAddr + "/readyz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				row.restart = time.Since(start)
				if !listening {
					row.listenAfter = row.restart
				}
				break
			}
		}
	}
	p.stop(b)
	return row
}

// replaceFlags returns args with the values of the flags in set replaced.
func replaceFlags(args []string, set map[string]string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if v, ok := set[out[i]]; ok {
			out[i+1] = v
		}
	}
	return out
}

func statusEntities(b *testing.B, addr, dir string) uint64 {
	conn, client, err := dialQuery(addr, nil, testToken(b, dir, grpcToken))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Status(ctx, &lkv1.StatusRequest{})
	if err != nil {
		b.Fatal(err)
	}
	return s.GetEntities()
}

// scaleTraffic makes 2,400 MCP calls (scaleCalls, round by round) and
// returns their p50 and p99 in ms.
func scaleTraffic(b *testing.B, node, client, mcpURL string) (p50, p99 map[string]float64) {
	type call struct {
		Name   string         `json:"name"`
		Server string         `json:"server"`
		Tool   string         `json:"tool"`
		Args   map[string]any `json:"args"`
	}
	var calls []call
	for _, c := range scaleCalls {
		calls = append(calls, call{c.name, "lorekeeper", c.tool, c.args})
	}
	cfg, err := json.Marshal(map[string]any{"rounds": 380, "warmup": 20, "calls": calls, "servers": map[string]string{"lorekeeper": mcpURL}})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(node, "bench.mjs", string(cfg))
	cmd.Dir = client
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("node bench.mjs: %v\n%s", err, stderr.String())
	}
	var got map[string]struct{ P50, P99 float64 }
	if err := json.Unmarshal(out, &got); err != nil {
		b.Fatalf("node bench.mjs printed %q: %v", out, err)
	}
	p50, p99 = map[string]float64{}, map[string]float64{}
	for name, r := range got {
		p50[name], p99[name] = r.P50, r.P99
	}
	return p50, p99
}

func medianRSS(b *testing.B, pid, samples int) float64 {
	var s []float64
	for range samples {
		s = append(s, procStatusMB(b, pid, "VmRSS"))
		time.Sleep(time.Second)
	}
	slices.Sort(s)
	return s[len(s)/2]
}

// idleCPU is the process's CPU time over d, in % of one core.
func idleCPU(b *testing.B, pid int, d time.Duration) float64 {
	t0 := cpuTicks(b, pid)
	time.Sleep(d)
	t1 := cpuTicks(b, pid)
	const hz = 100 // USER_HZ on Linux
	return float64(t1-t0) / hz / d.Seconds() * 100
}

// cpuTicks is utime+stime from /proc/<pid>/stat.
func cpuTicks(b *testing.B, pid int) uint64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces, in parentheses).
	fields := strings.Fields(line[strings.LastIndexByte(line, ')')+2:])
	u, _ := strconv.ParseUint(fields[11], 10, 64)
	s, _ := strconv.ParseUint(fields[12], 10, 64)
	return u + s
}

func printScale(rows []scaleRow) {
	var w strings.Builder
	fmt.Fprintf(&w, "\nBenchmarkScale (p50 / p99 ms through the TypeScript SDK client)\n| |")
	for _, r := range rows {
		fmt.Fprintf(&w, " %d |", r.entities)
	}
	w.WriteString("\n|---|")
	for range rows {
		w.WriteString("---|")
	}
	line := func(label string, cell func(r scaleRow) string) {
		fmt.Fprintf(&w, "\n| %s |", label)
		for _, r := range rows {
			fmt.Fprintf(&w, " %s |", cell(r))
		}
	}
	line("homebrew files", func(r scaleRow) string {
		return fmt.Sprintf("%d (%.1f MB)", r.homebrewFiles, float64(r.homebrewBytes)/1e6)
	})
	line("load (entities/s)", func(r scaleRow) string { return fmt.Sprintf("%.0f", r.loadRate) })
	line("peak RSS during load", func(r scaleRow) string { return fmt.Sprintf("%.0f MB", r.peakMB) })
	line("RSS steady → after 2,400 calls", func(r scaleRow) string { return fmt.Sprintf("%.0f → %.0f", r.steadyMB, r.afterMB) })
	line("restart to /readyz 200 (MCP accepting)", func(r scaleRow) string {
		return fmt.Sprintf("%.1f s (%.1f s)", r.restart.Seconds(), r.listenAfter.Seconds())
	})
	line("idle CPU", func(r scaleRow) string { return fmt.Sprintf("%.1f %% of a core", r.idleCPU) })
	for _, c := range scaleCalls {
		line("`"+c.name+"`", func(r scaleRow) string { return fmt.Sprintf("%.2f / %.2f", r.p50[c.name], r.p99[c.name]) })
	}
	fmt.Println(w.String())
}

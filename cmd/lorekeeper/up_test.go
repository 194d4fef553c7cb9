package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5esnapshot"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// testModelDir is where `make model` put the model: LOREKEEPER_MODEL_DIR
// (the Makefile exports it) or the repository's .models.
func testModelDir(t testing.TB) string {
	t.Helper()
	dir := modeltest.Dir()
	modeltest.Need(t, filepath.Join(dir, "libonnxruntime.so.1"))
	return dir
}

// testUpConfig is `lorekeeper up` on dir with every listener on a free
// loopback port and only the v2 spells synced (the whole catalogue is the
// ingest and query tests' business; here it would only take longer);
// extra flags come last.
func testUpConfig(t *testing.T, dir string, extra ...string) *upConfig {
	t.Helper()
	var cfg upConfig
	fs := newFlagSet("up", upUsage, io.Discard)
	cfg.register(fs)
	err := fs.parse(append([]string{
		"--data-dir", dir,
		"--nats-listen", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0",
		"--grpc-addr", "127.0.0.1:0",
		"--mcp-addr", "127.0.0.1:0",
		"--model-dir", testModelDir(t),
		"--open5e-endpoints", "v2/spells",
		"--orcbrew-dir", filepath.Join(dir, "orcbrew"),
	}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// snapshotSpells is the bundled snapshot's count of v2 spells, the one
// endpoint testUpConfig loads.
func snapshotSpells(t *testing.T) int {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.File("v2/spells/page-1.json")
	var p struct{ Count int }
	if err := json.Unmarshal(b, &p); err != nil || p.Count == 0 {
		t.Fatalf("the snapshot's v2 spells: count %d, %v", p.Count, err)
	}
	return p.Count
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startTestStack starts `lorekeeper up` in process and waits until the
// query node has stored everything on the stream.
func startTestStack(t *testing.T, cfg *upConfig) *upStack {
	t.Helper()
	ctx := t.Context()
	st, err := startUp(ctx, cfg, testLogger(t))
	if err != nil {
		t.Fatalf("startUp: %v", err)
	}
	t.Cleanup(func() {
		if err := st.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	conn, client, err := dialQuery(st.grpcAddr, nil, testToken(t, st.dataDir, grpcToken))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound, not a timing assertion: the first start embeds every spell.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		s, err := client.Status(ctx, &lkv1.StatusRequest{})
		if err == nil && s.GetEntities() > 0 && s.GetPending() == 0 && streamMsgs(t, st.natsURL, st.dataDir) <= s.GetEntities() {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("node not caught up after 5 minutes: status %v, err %v", s, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// streamMsgs is the number of messages on the ENTITIES stream of the
// NATS at url, with the token of the data directory dir ("": none).
func streamMsgs(tb testing.TB, url, dir string) uint64 {
	tb.Helper()
	return streamLen(tb, url, dir, ingest.StreamName)
}

// streamLen is the number of messages on a stream; 0 when it does not exist.
func streamLen(tb testing.TB, url, dir, stream string) uint64 {
	tb.Helper()
	nc, err := nats.Connect(url, nats.Token(testToken(tb, dir, natsToken)))
	if err != nil {
		tb.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return streamMsgsOf(tb, js, stream)
}

// streamMsgsOf is the number of messages on a stream; 0 when it does not
// exist.
func streamMsgsOf(tb testing.TB, js jetstream.JetStream, name string) uint64 {
	tb.Helper()
	s, err := js.Stream(tb.Context(), name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return info.State.Msgs
}

// metric reads one unlabelled sample (or the sum over labels) from
// /metrics; a metric that is not exposed fails the test, so that a
// misspelt name cannot pass for zero.
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	sum, found := scrape(t, addr, name)
	if !found {
		t.Fatalf("%s is not among the metrics at %s", name, addr)
	}
	return sum
}

// scrape is the sum of name's samples at addr, and whether there are any.
func scrape(t *testing.T, addr, name string) (sum float64, found bool) {
	t.Helper()
	sum, found, err := scrapeSum(addr, name)
	if err != nil {
		t.Fatal(err)
	}
	return sum, found
}

// scrapeSum is the sum of name's samples at addr, whether there are any,
// or why the metrics could not be read.
func scrapeSum(addr, name string) (sum float64, found bool, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, false, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
		found = true
	}
	return sum, found, sc.Err()
}

// callLookupSpell calls lookup_spell(name=fireball) and returns the results.
func callLookupSpell(t *testing.T, tr mcp.Transport) mcpserver.LookupOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lorekeeper-e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: map[string]any{"name": "fireball", "detail": "full"}})
	if err != nil {
		t.Fatalf("lookup_spell: %v", err)
	}
	if res.IsError {
		t.Fatalf("lookup_spell returned an error result: %+v", res.Content)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out mcpserver.LookupOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

// checkSRDFireball asserts the results hold the SRD 5.1 Fireball with its
// document metadata.
func checkSRDFireball(t *testing.T, out mcpserver.LookupOutput) {
	t.Helper()
	for _, e := range out.Results {
		if e.DocumentKey != "srd-2014" {
			continue
		}
		if e.Name != "Fireball" || e.Kind != "spell" {
			t.Errorf("srd-2014 result is %q (%s), want the spell Fireball", e.Name, e.Kind)
		}
		if e.DocumentName != "System Reference Document 5.1" || e.DocumentSource != "open5e_v2" {
			t.Errorf("document = %q from %q, want System Reference Document 5.1 from open5e_v2", e.DocumentName, e.DocumentSource)
		}
		if e.Spell == nil || e.Spell.Level != 3 || !strings.Contains(e.Description, "8d6") {
			t.Errorf("SRD Fireball lacks its level 3 or its 8d6 description: %+v", e.Spell)
		}
		return
	}
	var got []string
	for _, e := range out.Results {
		got = append(got, e.Name+" ("+e.DocumentKey+")")
	}
	t.Fatalf("no srd-2014 Fireball among %v", got)
}

// buildBinary builds the lorekeeper command for subprocess tests.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lorekeeper")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestUp_LookupSpellOverHTTPAndStdio(t *testing.T) {
	dir := t.TempDir()
	st := startTestStack(t, testUpConfig(t, dir))

	t.Run("streamable HTTP", func(t *testing.T) {
		checkSRDFireball(t, callLookupSpell(t, &mcp.StreamableClientTransport{Endpoint: st.mcpURL}))
	})
	t.Run("stdio subprocess", func(t *testing.T) {
		cmd := exec.Command(buildBinary(t), "mcp", "--grpc-addr", st.grpcAddr, "--grpc-token-file", tokenPath(dir, grpcToken), "--log-level", "warn")
		cmd.Stderr = testWriter{t}
		checkSRDFireball(t, callLookupSpell(t, &mcp.CommandTransport{Command: cmd}))
	})
	t.Run("status reads this instance's ingest state", func(t *testing.T) {
		// Without --nats-url, the sync state comes from the node, which
		// knows its NATS (here on a random port), not from a default NATS
		// that may be another instance's.
		var out, errOut strings.Builder
		if err := runStatus(t.Context(), []string{"--grpc-addr", st.grpcAddr, "--data-dir", dir}, &out, &errOut); err != nil {
			t.Fatalf("status: %v\n%s", err, errOut.String())
		}
		n := snapshotSpells(t)
		if strings.Contains(out.String(), "unavailable") || !regexp.MustCompile(fmt.Sprintf(`/v2/spells/\s+\S+ \S+\s+%d\s`, n)).MatchString(out.String()) {
			t.Errorf("status without --nats-url: want this instance's /v2/spells/ with %d entities; got\n%s", n, out.String())
		}
	})
	t.Run("MCP features over streamable HTTP", func(t *testing.T) {
		checkMCPFeatures(t, st.mcpURL, filepath.Join(dir, "orcbrew"))
	})
	t.Run("prompts and completions over stdio", func(t *testing.T) {
		cmd := exec.Command(buildBinary(t), "mcp", "--grpc-addr", st.grpcAddr, "--data-dir", dir, "--log-level", "warn")
		cmd.Stderr = testWriter{t}
		cs := connectSession(t, &mcp.CommandTransport{Command: cmd}, nil)
		checkCompareEditions(t, cs)
		checkCompletions(t, cs)
	})
	t.Run("credentials", func(t *testing.T) { checkCredentials(t, st, dir) })
	t.Run("health and metrics", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get("http://" + st.metricsAddr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: %s", path, resp.Status)
			}
		}
		if got := metric(t, st.metricsAddr, "lorekeeper_embedder_embedded_texts_total"); got < 1 {
			t.Errorf("lorekeeper_embedder_embedded_texts_total = %v after the first load, want > 0", got)
		}
	})
}

// TestUp_RestartRepublishesNothing: a second start on the same data
// directory publishes nothing to the stream and stores nothing again.
func TestUp_RestartRepublishesNothing(t *testing.T) {
	dir := t.TempDir()
	first := startTestStack(t, testUpConfig(t, dir))
	before := streamMsgs(t, first.natsURL, first.dataDir)
	spells := snapshotSpells(t)
	if before < uint64(spells) {
		t.Fatalf("%d messages on the stream after the first start, want the v2 spells (%d)", before, spells)
	}
	if got := metric(t, first.metricsAddr, "lorekeeper_ingest_entities_published_total"); got < float64(spells) {
		t.Fatalf("the first start published %v entities by its metric, want the v2 spells (%d)", got, spells)
	}
	if err := first.close(); err != nil {
		t.Fatal(err)
	}

	// A resync interval of a second makes the restarted node resync at
	// once (the last run is older), so that it has the chance to publish
	// something, were it to.
	second := startTestStack(t, testUpConfig(t, dir, "--resync-interval", "1s"))
	deadline := time.Now().Add(2 * time.Minute)
	for metric(t, second.metricsAddr, "lorekeeper_ingest_resync_duration_seconds_count") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the restarted node ran no resync in 2 minutes")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if after := streamMsgs(t, second.natsURL, second.dataDir); after != before {
		t.Errorf("stream holds %d messages after a restart, want %d as before", after, before)
	}
	for _, m := range []string{"lorekeeper_embedder_messages_total", "lorekeeper_embedder_embedded_texts_total"} {
		if got := metric(t, second.metricsAddr, m); got != 0 {
			t.Errorf("%s = %v after a restart, want 0", m, got)
		}
	}
	// Labelled by kind and document, the ingest counter has no series until
	// something is published; the first start showed that its name is right.
	if got, _ := scrape(t, second.metricsAddr, "lorekeeper_ingest_entities_published_total"); got != 0 {
		t.Errorf("lorekeeper_ingest_entities_published_total = %v after a restart and a resync, want 0", got)
	}
	conn, client, err := dialQuery(second.grpcAddr, nil, testToken(t, second.dataDir, grpcToken))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := client.Status(t.Context(), &lkv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s.GetEntities() != before || s.GetVectors() != before {
		t.Errorf("after restart: %d entities, %d vectors; want %d of each", s.GetEntities(), s.GetVectors(), before)
	}
}

func TestRun_Usage(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr error
		want    string
	}{
		{nil, errUsage, "Usage: lorekeeper <command>"},
		{[]string{"nope"}, errUsage, `unknown command "nope"`},
		{[]string{"help"}, nil, "Run it:"},
		{[]string{"search"}, errUsage, "Usage: lorekeeper search"},
		{[]string{"up", "--help"}, nil, "LOREKEEPER_DATA_DIR"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			var out strings.Builder
			err := run(t.Context(), tt.args, strings.NewReader(""), &out, &out)
			if tt.wantErr != nil && err != tt.wantErr {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out.String())
			}
		})
	}
}

// testToken is the token called name that the data directory dir keeps,
// "" for no dir.
func testToken(tb testing.TB, dir, name string) string {
	tb.Helper()
	if dir == "" {
		return ""
	}
	tok, err := readToken(tokenPath(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

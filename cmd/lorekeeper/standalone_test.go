package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// syncBuffer is a bytes.Buffer safe to write from one goroutine and read
// from another.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// desktopProcess is `lorekeeper mcp --standalone` started as a desktop
// client starts it, with the SDK's client on its stdin and stdout.
type desktopProcess struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *syncBuffer // everything the process wrote to stdout
	stderr  *syncBuffer
	session *mcp.ClientSession
	started time.Time

	mu       sync.Mutex
	logs     []string // MCP log messages received
	progress []string // MCP progress notifications received: "done/total message"
}

func (p *desktopProcess) logged(substr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.logs {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// startDesktopSyncing is the desktop command line syncing only endpoints
// (the whole catalogue proves nothing more there, at many times the cost).
func startDesktopSyncing(t *testing.T, bin string, env []string, endpoints string) *desktopProcess {
	t.Helper()
	return startDesktopArgs(t, bin, env, "--open5e-endpoints", endpoints)
}

// startDesktopArgs is startDesktop with the flags after mcp --standalone.
func startDesktopArgs(t *testing.T, bin string, env []string, args ...string) *desktopProcess {
	t.Helper()
	p := &desktopProcess{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"mcp", "--standalone"}, args...)...)
	p.cmd.Env = env
	p.cmd.Dir = "/" // desktop clients start servers anywhere
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.started = time.Now()
	// Cleanups run last first: the child is killed, then its stderr shown.
	t.Cleanup(func() {
		if t.Failed() && p.cmd.Process != nil {
			t.Logf("stderr of pid %d:\n%s", p.cmd.Process.Pid, p.stderr.String())
		}
	})
	startChild(t, p.cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "lorekeeper-desktop-test", Version: "1"}, &mcp.ClientOptions{
		// Deprecated in the 2026-07-28 protocol, still what clients show; see sessionLog.
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { //nolint:staticcheck // see sessionLog
			p.mu.Lock()
			defer p.mu.Unlock()
			p.logs = append(p.logs, strings.TrimSpace(toString(req.Params.Data)))
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.progress = append(p.progress, fmt.Sprintf("%g/%g %s", req.Params.Progress, req.Params.Total, req.Params.Message))
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p.session, err = client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(out, p.stdout)), Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("initialize over stdio: %v\nstderr:\n%s", err, p.stderr.String())
	}
	if err := p.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil { //nolint:staticcheck // see sessionLog
		t.Fatalf("logging/setLevel: %v", err)
	}
	return p
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// lookupFireball calls lookup_spell(name="fireball", detail="full").
func (p *desktopProcess) lookupFireball(ctx context.Context) (mcpserver.LookupOutput, error) {
	var out mcpserver.LookupOutput
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: map[string]any{"name": "fireball", "detail": "full"}})
	if err != nil {
		return out, err
	}
	if res.IsError {
		return out, &toolError{res}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, &out)
}

type toolError struct{ res *mcp.CallToolResult }

func (e *toolError) Error() string {
	b, _ := json.Marshal(e.res.Content)
	return "tool error: " + string(b)
}

func hasSRD(out mcpserver.LookupOutput) bool {
	for _, e := range out.Results {
		if e.DocumentKey == "srd-2014" {
			return true
		}
	}
	return false
}

// stop closes stdin, as a desktop client does when it quits, and waits for
// a clean exit.
func (p *desktopProcess) stop(t *testing.T) {
	t.Helper()
	_ = p.session.Close()
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pid %d exited with %v after its client closed stdin; stderr:\n%s", p.cmd.Process.Pid, err, p.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Errorf("pid %d still running a minute after its client closed stdin", p.cmd.Process.Pid)
		_ = p.cmd.Process.Kill()
	}
}

// checkOnlyJSONRPC asserts that every line the process wrote to stdout is
// a JSON-RPC 2.0 message.
func checkOnlyJSONRPC(t *testing.T, stdout string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	n := 0
	for sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout line %d is not JSON-RPC: %.200q", n+1, sc.Text())
		}
		n++
	}
	if n == 0 {
		t.Error("nothing on stdout")
	}
}

// TestStandalone_desktopClient runs the binary as a desktop MCP client
// does: `lorekeeper mcp --standalone`, started in /, with an empty HOME and
// no LOREKEEPER_* (or XDG_*) variables. The model is found the way a
// checkout's binary finds it: .models beside the bin/ directory holding the
// binary (here a link to the model `make model` installed; the model fetch
// itself is tested against a local registry in embedder/modelfile).
func TestStandalone_desktopClient(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin", "lorekeeper")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if st, err := os.Stat(bin); err == nil {
		t.Logf("binary: %.1f MB", float64(st.Size())/(1<<20))
	}
	if err := os.Symlink(testModelDir(t), filepath.Join(root, ".models")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	dataDir := filepath.Join(home, ".local", "share", "lorekeeper")

	// The whole bundled catalogue: its vectors are bundled, so it loads in
	// seconds.
	first := startDesktopArgs(t, bin, env)
	initialised := time.Since(first.started)
	cat, err := readBundledCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	fireballBooks := cat.docs[catalogueKey(lkv1.Kind_KIND_SPELL, "fireball")]
	ctx := t.Context()
	tools, err := first.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"lookup_spell", "lookup_creature", "lookup_equipment", "lookup_character_option", "lookup_rule", "search_dnd_content", "list_documents"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("tools/list = %v, missing %s", names, want)
		}
	}

	// Ask until Fireball is there (the first load embeds everything); a
	// bound, not a timing assertion.
	var firstAnswer, fireball time.Duration
	loadingWarned, partial := false, 0
	deadline := time.Now().Add(10 * time.Minute)
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := first.lookupFireball(cctx)
		cancel()
		if err == nil && firstAnswer == 0 {
			firstAnswer = time.Since(first.started)
		}
		if err == nil && strings.Contains(strings.Join(out.Warnings, " "), "still loading") {
			loadingWarned = true
			// An answer during the load names the books whose copy is
			// still to come, and the SRD's copy comes first.
			if books := fireballCopies(out); len(books) > 0 && len(books) < len(fireballBooks) {
				partial++
				if !strings.Contains(strings.Join(out.Warnings, " "), "More copies of Fireball are still loading") {
					t.Errorf("an answer during the load with Fireball from %v of %v: warnings %q, want more copies loading", books, fireballBooks, out.Warnings)
				}
				if !strings.HasPrefix(out.Results[0].DocumentKey, "srd-") {
					t.Errorf("an answer during the load gave %s's Fireball first, not an SRD's", out.Results[0].DocumentKey)
				}
			}
		}
		if err == nil && hasSRD(out) {
			fireball = time.Since(first.started)
			checkSRDFireball(t, out)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Fireball after 10 minutes: last answer %+v, err %v", out, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A second client during the load shares the first's service, and
	// hears from it that the content is still loading: a miss is not
	// final. (Checked only while the first is still loading, which the
	// rest of the catalogue takes far longer than this.)
	during := startDesktopArgs(t, bin, env)
	out, err := during.lookupFireball(ctx)
	stillLoading := !first.logged("LoreKeeper is ready")
	if err != nil || stillLoading && !strings.Contains(strings.Join(out.Warnings, " "), "still loading") {
		t.Errorf("a second client during the load: warnings %q, err %v; want the loading warning", out.Warnings, err)
	}
	t.Logf("second client during the load: first still loading %v, warnings %q", stillLoading, out.Warnings)
	during.stop(t)
	for !first.logged("LoreKeeper is ready") {
		if time.Now().After(deadline) {
			t.Fatalf("no ready message after 10 minutes; messages: %v", first.logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	loaded := time.Since(first.started)
	checkReadyOnce(t, first)
	if !loadingWarned {
		t.Error("no answer during the first load warned that the content was still loading")
	}
	if out, err := first.lookupFireball(ctx); err != nil || strings.Contains(strings.Join(out.Warnings, " "), "loading") {
		t.Errorf("after the load: warnings %q, err %v; want no loading warning", out.Warnings, err)
	}
	if !first.logged("is loading its content") {
		t.Errorf("the first start never told the client it was loading; messages: %v", first.logs)
	}
	checkProgress(t, first, uint64(cat.total))
	t.Logf("first start: initialize %v, first answer %v, Fireball %v, load complete %v; %d answers with some of Fireball's %d copies",
		initialised.Round(time.Millisecond), firstAnswer.Round(time.Millisecond), fireball.Round(time.Millisecond), loaded.Round(time.Millisecond), partial, len(fireballBooks))

	// Data and logs went to the user's data directory.
	for _, p := range []string{"nats", "badger", "orcbrew", "lorekeeper.log", lockName} {
		if _, err := os.Stat(filepath.Join(dataDir, p)); err != nil {
			t.Errorf("%s in the user's data directory: %v", p, err)
		}
	}

	// A second client on the same HOME shares the first's service.
	second := startDesktopArgs(t, bin, env)
	out, err = second.lookupFireball(ctx)
	if err != nil {
		t.Fatalf("second client: lookup_spell: %v", err)
	}
	checkSRDFireball(t, out)
	if !strings.Contains(second.stderr.String(), "sharing its query service") {
		t.Errorf("second process's stderr does not say it shares:\n%s", second.stderr.String())
	}
	// Issue 49, row 13: an argument too long gets the owner's answer
	// through the process sharing its service, not "temporarily
	// unavailable" (gRPC refused the 2 MB message).
	long := map[string]any{"name": strings.Repeat("a", 2_000_000)}
	own, ownErr := first.session.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: long})
	shared, sharedErr := second.session.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_spell", Arguments: long})
	if ownErr != nil || sharedErr != nil || !own.IsError || !strings.Contains(toolText(own), "at most") || toolText(shared) != toolText(own) {
		t.Errorf("a 2,000,000-character name: owner %q (%v), sharer %q (%v); want the same \"too long\" error", toolText(own), ownErr, toolText(shared), sharedErr)
	}
	second.stop(t)
	checkOnlyJSONRPC(t, second.stdout.String())

	// The first is unharmed, and stops cleanly when its client goes.
	if out, err := first.lookupFireball(ctx); err != nil || len(out.Results) == 0 {
		t.Errorf("first client after the second left: %+v, %v", out, err)
	}
	first.stop(t)
	checkOnlyJSONRPC(t, first.stdout.String())

	// A restart answers from what is stored: complete at once, so with no
	// loading warning (the first answer waits for the in-memory index).
	again := startDesktopArgs(t, bin, env)
	if out, err := again.lookupFireball(ctx); err != nil || len(out.Results) == 0 || strings.Contains(strings.Join(out.Warnings, " "), "loading") {
		t.Errorf("after a restart: %+v, %v; want results and no loading warning", out, err)
	}
	t.Logf("restart: first Fireball %v", time.Since(again.started).Round(time.Millisecond))
	checkReadyOnce(t, again)
	again.stop(t)
	checkOnlyJSONRPC(t, again.stdout.String())
}

// fireballCopies is the books whose Fireball an answer holds.
func fireballCopies(out mcpserver.LookupOutput) []string {
	var books []string
	for _, e := range out.Results {
		if !strings.EqualFold(e.Name, "fireball") {
			continue
		}
		books = append(books, e.DocumentKey)
		for _, a := range e.Alternates {
			books = append(books, a.DocumentKey)
		}
	}
	return books
}

// checkReadyOnce waits until p has told its client it is ready, then a
// few of its status ticks more, and checks it said so once.
func checkReadyOnce(t *testing.T, p *desktopProcess) {
	t.Helper()
	waitUntilFor(t, 5*time.Minute, "the ready message", func() bool { return p.logged("LoreKeeper is ready") })
	time.Sleep(3 * time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.logs {
		if strings.HasPrefix(l, "LoreKeeper is ready") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("told its client it was ready %d times, want once: %q", n, p.logs)
	}
}

// checkProgress checks that p told its client the load's progress as "N
// of M entities stored" with M what the bundled catalogue holds, and N
// only growing.
func checkProgress(t *testing.T, p *desktopProcess, total uint64) {
	t.Helper()
	re := regexp.MustCompile(`loading its content: (\d+) of (\d+) entities stored`)
	p.mu.Lock()
	defer p.mu.Unlock()
	var last uint64
	seen := 0
	for _, l := range p.logs {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		n, _ := strconv.ParseUint(m[1], 10, 64)
		of, _ := strconv.ParseUint(m[2], 10, 64)
		if of != total || n < last {
			t.Errorf("progress %q after %d stored: want N of %d, N growing", l, last, total)
		}
		last = n
	}
	if seen == 0 {
		t.Errorf("no progress told as N of M: %q", p.logs)
	}
}

// TestBackendConn: while the process starts, a call in a long phase (the
// model download) answers at once with the state and its figures; in a
// short phase it waits for the query service (within its context), and
// every call that reaches the service goes through the interceptor.
func TestBackendConn(t *testing.T) {
	svc := query.NewService(snapshotStore(t, lkv1.Kind_KIND_SPELL), nil, nil)
	state := newStartState()
	var intercepted atomic.Int32
	b := newBackendConn(state, func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		intercepted.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}, func() (string, bool) { return "no owner", false })
	client := lkv1.NewQueryServiceClient(b)
	fireball := &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "fireball"}}

	state.progress(40e6, 112e6)
	_, err := client.LookupSpells(t.Context(), fireball)
	var nr *mcpserver.NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "downloading the embedding model: 40 of 112 MB") {
		t.Errorf("during the download: %v, want the download's state", err)
	}

	state.set("opening its data", false)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := client.LookupSpells(ctx, fireball); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("opening the data, past the deadline: %v, want DeadlineExceeded", err)
	}

	waited := make(chan error, 1)
	go func() {
		resp, err := client.LookupSpells(t.Context(), fireball)
		if err == nil && len(resp.GetResults()) == 0 {
			err = errors.New("no results")
		}
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("a call returned before the service was up: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.set(query.NewInProcessConn(svc, nil), false)
	if err := <-waited; err != nil {
		t.Errorf("the waiting call, once the service is up: %v", err)
	}
	if n := intercepted.Load(); n != 1 {
		t.Errorf("%d calls intercepted, want 1 (the one that reached the service)", n)
	}
}

// TestTellStart: a client that subscribes to log messages after the state
// was last told (a download that stalled before the client connected) is
// told the state at once.
func TestTellStart(t *testing.T) {
	state := newStartState()
	state.progress(40e6, 112e6) // told to nobody: no session yet
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	tellStart(srv, state)
	got := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { //nolint:staticcheck // see sessionLog
			got <- toString(req.Params.Data)
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil { //nolint:staticcheck // see sessionLog
		t.Fatal(err)
	}
	select {
	case msg := <-got:
		if want := "downloading the embedding model: 40 of 112 MB"; !strings.Contains(msg, want) {
			t.Errorf("log message %q, want %q", msg, want)
		}
	case <-time.After(5 * time.Second):
		t.Error("no log message after logging/setLevel")
	}
}

// TestStartState_progressTold: listeners (the lock file that status reads,
// the MCP log) hear of a download's first figures and its end at once, and
// of the figures between at most once a second.
func TestStartState_progressTold(t *testing.T) {
	state := newStartState()
	var mu sync.Mutex
	var told []string
	state.listen(func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, msg)
	})
	last := func() (string, int) {
		mu.Lock()
		defer mu.Unlock()
		if len(told) == 0 {
			return "", 0
		}
		return told[len(told)-1], len(told)
	}
	state.set("fetching the embedding model", true)
	state.progress(5e6, 112e6) // within the second of the phase: told at once all the same
	if msg, _ := last(); msg != "downloading the embedding model: 5 of 112 MB" {
		t.Errorf("after the first figures: last told %q, want the download's figures", msg)
	}
	state.progress(6e6, 112e6) // within a second of the last: held
	if msg, n := last(); n != 2 || !strings.Contains(msg, "5 of 112") {
		t.Errorf("a second figure within the second: told %d messages, last %q; want it held", n, msg)
	}
	state.progress(112e6, 112e6) // the end: at once
	if msg, _ := last(); msg != "converting the embedding model (once)" {
		t.Errorf("at the end: last told %q", msg)
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/mcpserver"
)

// desktopEnv is the environment a desktop client gives the server, with
// the data directory and model directory named (only HOME and PATH
// otherwise).
func desktopEnv(t *testing.T, dataDir, modelDir string, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	return append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"LOREKEEPER_DATA_DIR=" + dataDir, "LOREKEEPER_MODEL_DIR=" + modelDir}, extra...)
}

// stalledRegistry is an npm registry stand-in that sends the first stallAt
// bytes of every package tarball and then nothing, holding the connection
// open until the client goes: a first start on a link that stalls.
type stalledRegistry struct {
	srv     *httptest.Server
	stallAt int64
	mu      sync.Mutex
	asked   []string
	sent    chan struct{} // closed once stallAt bytes have gone out
	once    sync.Once
}

func newStalledRegistry(t *testing.T, stallAt int64) *stalledRegistry {
	t.Helper()
	pkgs, err := modelfile.DefaultPackages(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Skip(err) // the model fetch itself is unsupported here
	}
	sizes := map[string]int64{}
	for _, p := range pkgs {
		sizes["/"+strings.TrimPrefix(p.URL(""), "/")] = p.Size
	}
	r := &stalledRegistry{stallAt: stallAt, sent: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.asked = append(r.asked, req.URL.Path)
		r.mu.Unlock()
		size, ok := sizes[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(make([]byte, min(stallAt, size)))
		w.(http.Flusher).Flush()
		r.once.Do(func() { close(r.sent) })
		<-req.Context().Done() // stalled until the client gives up
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *stalledRegistry) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// callTool calls a tool and returns its text and whether it is an error.
func (p *desktopProcess) callTool(ctx context.Context, name string, args map[string]any, progressToken any) (string, bool, error) {
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		params.SetProgressToken(progressToken)
	}
	res, err := p.session.CallTool(ctx, params)
	if err != nil {
		return "", false, err
	}
	return toolText(res), res.IsError, nil
}

// TestStandalone_stalledModelDownload starts `mcp --standalone` on a first
// start whose model download stalls (LOREKEEPER_NPM_REGISTRY points at a
// local registry that sends a few MB and then nothing): the client
// initializes, every tool call answers with the true state and its
// figures, the log message reaches the client once it subscribes, a call
// with a progress token gets a progress notification, and `lorekeeper
// status` names the process that owns the data and what it is doing
// instead of asking another server.
func TestStandalone_stalledModelDownload(t *testing.T) {
	const stallAt = 5 << 20
	reg := newStalledRegistry(t, stallAt)
	pkgs, _ := modelfile.DefaultPackages(runtime.GOOS, runtime.GOARCH)
	var total int64
	for _, p := range pkgs {
		total += p.Size
	}
	want := fmt.Sprintf("downloading the embedding model: %d of %d MB", megabytes(stallAt), megabytes(total))

	bin := buildBinary(t)
	dataDir := t.TempDir()
	// The proxy variables keep a server that ignores the registry flag off
	// the real registry (loopback addresses are never proxied).
	env := desktopEnv(t, dataDir, t.TempDir(), "LOREKEEPER_NPM_REGISTRY="+reg.srv.URL,
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9")
	p := startDesktopArgs(t, bin, env, "--open5e-endpoints", "v2/conditions")
	select {
	case <-reg.sent:
	case <-time.After(time.Minute):
		t.Fatalf("the model was not asked of LOREKEEPER_NPM_REGISTRY within a minute (asked: %q)", reg.requests())
	}
	first := reg.requests()[0]
	if want := "/" + path.Base(pkgs[0].URL("")); !strings.HasSuffix(first, want) {
		t.Errorf("first request %q, want the package %s", first, want)
	}

	// The state moves to the figures within a second of the bytes.
	ctx := t.Context()
	var text string
	var answered time.Duration
	waitUntilFor(t, 30*time.Second, "an answer with the download's figures", func() bool {
		asked := time.Now()
		var isErr bool
		var err error
		text, isErr, err = p.callTool(ctx, "lookup_spell", map[string]any{"name": "fireball"}, nil)
		answered = time.Since(asked)
		if err != nil {
			t.Fatalf("lookup_spell during the download: %v", err)
		}
		if !isErr {
			t.Fatalf("lookup_spell during the download answered as if nothing were missing: %s", text)
		}
		return strings.Contains(text, want)
	})
	t.Logf("first answer during a stalled download: %v: %s", answered.Round(time.Millisecond), text)
	if p.cmd.ProcessState != nil {
		t.Fatal("the server exited during the download")
	}

	// A tool call with a progress token gets the figures as progress.
	if _, _, err := p.callTool(ctx, "search_dnd_content", map[string]any{"query": "fire"}, "t1"); err != nil {
		t.Fatal(err)
	}
	wantProgress := fmt.Sprintf("%d/%d LoreKeeper is starting: %s", megabytes(stallAt), megabytes(total), want)
	waitUntilFor(t, 10*time.Second, "the progress notification", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.progress) > 0 && p.progress[0] == wantProgress
	})
	// The client subscribed to log messages after the download started:
	// it is told the state then.
	waitUntilFor(t, 10*time.Second, "the log message", func() bool { return p.logged(want) })

	// status names the owner and its state; it does not ask a default
	// address, where another LoreKeeper may listen. The state it reads is
	// the one the owner last wrote for others, which may lag its answers
	// by a write ("0 of 112 MB" under load): asked until it has caught up.
	var out string
	var err error
	waitUntilFor(t, 10*time.Second, "status to show the download's figures", func() bool {
		out, err = runCLI(t, bin, env, "status")
		return strings.Contains(out, want)
	})
	if err == nil || !strings.Contains(out, fmt.Sprint(p.cmd.Process.Pid)) || !strings.Contains(out, want) || !strings.Contains(out, dataDir) || strings.Contains(out, defaultGRPCAddr) {
		t.Errorf("status during the download: err %v, output:\n%s\nwant the owner's pid %d, its data dir and %q, and no %s", err, out, p.cmd.Process.Pid, want, defaultGRPCAddr)
	}
	p.stop(t)
}

// runCLI runs the binary with args and returns its combined output.
func runCLI(t *testing.T, bin string, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s %v did not end within a minute:\n%s", filepath.Base(bin), args, out)
	}
	return string(out), err
}

// lookup calls a lookup tool and decodes its structured result.
func (p *desktopProcess) lookup(ctx context.Context, tool string, args map[string]any) (mcpserver.LookupOutput, error) {
	var out mcpserver.LookupOutput
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
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

// homebrewKeys are the keys of the sample's entities the server answers,
// sorted, and the warnings of the answers.
func (p *desktopProcess) homebrewKeys(t *testing.T) (keys, warnings []string) {
	t.Helper()
	for _, tool := range []string{"lookup_spell", "lookup_creature"} {
		out, err := p.lookup(t.Context(), tool, map[string]any{"documents": []string{"test-content-pack"}, "limit": 50})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		for _, e := range out.Results {
			keys = append(keys, e.Key)
		}
		warnings = append(warnings, out.Warnings...)
	}
	sort.Strings(keys)
	return keys, warnings
}

// sampleKeys are the entity keys of the OrcBrew sample, from its own
// decoding.
func sampleKeys(t *testing.T, data []byte) []string {
	t.Helper()
	f, err := orcbrew.Decode("sample.orcbrew", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range f.Entities {
		keys = append(keys, e.GetKey())
	}
	sort.Strings(keys)
	return keys
}

// TestStandalone_homebrewComesBack drops an OrcBrew file into a standalone
// server's folder, deletes it, drops it again within the stream's
// duplicate window and restarts: every entity of the file is served again,
// and the restart (a warm start, nothing missing) answers without a
// loading warning.
func TestStandalone_homebrewComesBack(t *testing.T) {
	data, err := os.ReadFile("../../ingest/edn/testdata/orcbrew/lorekeeper-mcp_sample.orcbrew")
	if err != nil {
		t.Fatal(err)
	}
	want := sampleKeys(t, data)
	bin := buildBinary(t)
	dataDir := t.TempDir()
	env := desktopEnv(t, dataDir, testModelDir(t))
	args := []string{"--open5e-endpoints", "v2/conditions"}
	p := startDesktopArgs(t, bin, env, args...)
	waitUntilFor(t, 5*time.Minute, "the first load", func() bool { return p.logged("LoreKeeper is ready") })

	file := filepath.Join(dataDir, "orcbrew", "ashen-vale.orcbrew")
	served := func(what string, want []string) time.Duration {
		t.Helper()
		start := time.Now()
		var got []string
		waitUntilFor(t, 2*time.Minute, what, func() bool {
			got, _ = p.homebrewKeys(t)
			return slices.Equal(got, want)
		})
		return time.Since(start)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	first := served("the dropped file's entities", want)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	removed := served("the deleted file's entities gone", nil)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	again := served("the entities of the file dropped again", want)
	t.Logf("homebrew round trip: dropped -> served %v, deleted -> gone %v, dropped again -> served %v",
		first.Round(time.Millisecond), removed.Round(time.Millisecond), again.Round(time.Millisecond))

	// The command line says which server answered.
	out, err := runCLI(t, bin, env, "docs")
	if answered := fmt.Sprintf("process %d, data in %s", p.cmd.Process.Pid, dataDir); err != nil || !strings.Contains(out, "Answered by LoreKeeper") || !strings.Contains(out, answered) || !strings.Contains(out, "test-content-pack") {
		t.Errorf("docs: err %v, output:\n%s\nwant the documents and %q", err, out, answered)
	}

	// A file that cannot be read: the client is told, and list_documents
	// and homebrew_overview name the file and the error.
	if err := os.WriteFile(filepath.Join(dataDir, "orcbrew", "broken.orcbrew"), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	const parseErr = "unexpected end of input"
	waitUntilFor(t, 2*time.Minute, "the client told of the broken file", func() bool {
		return p.logged("broken.orcbrew could not be imported") && p.logged(parseErr)
	})
	res, err := p.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var docs mcpserver.DocumentsOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &docs); err != nil {
		t.Fatal(err)
	}
	if ps := docs.ImportProblems; len(ps) != 1 || ps[0].File != "broken.orcbrew" || ps[0].Status != "failed" || !strings.Contains(ps[0].Error, parseErr) {
		t.Errorf("list_documents import problems: %+v, want broken.orcbrew failed with %q", ps, parseErr)
	}
	_, err = p.session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "homebrew_overview", Arguments: map[string]string{"document": "broken"}})
	if err == nil || !strings.Contains(err.Error(), "broken.orcbrew") || !strings.Contains(err.Error(), parseErr) {
		t.Errorf("homebrew_overview of the broken file's book: %v, want the file and its error", err)
	}
	p.stop(t)

	p = startDesktopArgs(t, bin, env, args...)
	keys, warnings := p.homebrewKeys(t)
	if !slices.Equal(keys, want) {
		t.Errorf("after a restart: %q served, want %q", keys, want)
	}
	if len(warnings) > 0 {
		t.Errorf("a warm start with nothing missing warned: %q", warnings)
	}
	p.stop(t)
}

// TestStandalone_badLines writes raw lines to the standalone binary's
// stdin: a line that is not JSON gets -32700, another "jsonrpc" version
// -32600 with its id, and the session goes on (the server used to exit
// with code 1 at the first such line).
func TestStandalone_badLines(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "mcp", "--standalone", "--open5e-endpoints", "v2/conditions")
	cmd.Env = desktopEnv(t, t.TempDir(), testModelDir(t))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startChild(t, cmd)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 4<<20)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %q: %v\nstderr:\n%s", line, err, stderr.String())
		}
		if strings.Contains(line, `"notifications/`) {
			return nil
		}
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("stdout line %q is not JSON", lines.Text())
			}
			if _, ok := m["method"]; !ok { // a reply, not a notification
				return m
			}
		}
		t.Fatalf("after %q: stdout ended; the server exited\nstderr:\n%s", line, stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		id   any
		code float64
	}{
		{`not JSON at all`, nil, -32700},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, float64(7), -32600},
	} {
		r := send(c.line)
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != c.code || r["id"] != c.id {
			t.Errorf("%s: got %v, want id %v and code %v", c.line, r, c.id, c.code)
		}
		if r := send(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); r["result"] == nil {
			t.Fatalf("tools/list after %s: %v", c.line, r)
		}
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after stdin closed: %v\nstderr:\n%s", err, stderr.String())
	}
}

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

const stdioHelperEnv = "LOREKEEPER_MCP_STDIO_HELPER"

// TestMain doubles as the stdio server of TestRunStdio: re-executed with
// stdioHelperEnv set, the test binary serves MCP on stdin/stdout, backed by
// the fake query service over bufconn.
func TestMain(m *testing.M) {
	if os.Getenv(stdioHelperEnv) == "1" {
		os.Exit(stdioHelper())
	}
	os.Exit(m.Run())
}

func stdioHelper() int {
	f, err := newFake()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	client, stop, err := serveBufconn(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := mcpserver.New(client, &mcpserver.Options{Version: "stdio-test"}).RunStdio(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestRunStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	if v := cs.InitializeResult().ServerInfo.Version; v != "stdio-test" {
		t.Errorf("version = %q", v)
	}
	for _, tool := range allTools {
		mustOK(t, callTool(t, cs, tool.name, tool.args))
	}
	res := callTool(t, cs, "lookup_creature", map[string]any{"name": "goblin"})
	wantContains(t, text(res), "## Goblin", "**Challenge** 1/4 (50 XP)")
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://entity/open5e_v2:srd-2014:creature:goblin"}); err != nil {
		t.Errorf("read resource: %v", err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestRunIO(t *testing.T) {
	h := newServer(t)
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- h.srv.RunIO(context.Background(), serverR, serverW) }()
	cs := connect(t, &mcp.IOTransport{Reader: clientR, Writer: clientW})
	res := callTool(t, cs, "lookup_spell", map[string]any{"name": "fireball"})
	wantContains(t, text(res), "## Fireball")
	cs.Close()
	clientW.Close()
	if err := <-done; err != nil {
		t.Errorf("RunIO: %v", err)
	}
}

// TestRunStdio_badLines writes raw lines to a real stdio server process: a
// line that is not JSON gets -32700, a message with another "jsonrpc"
// version -32600 with its id, and the session goes on (the SDK alone ends
// it at the first such line).
func TestRunStdio_badLines(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 4<<20)
	type reply struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	exchange := func(line string) reply {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
		if strings.Contains(line, `"notifications/`) {
			return reply{}
		}
		if !lines.Scan() {
			t.Fatalf("after %q: stdout ended (%v); the server exited", line, lines.Err())
		}
		var r reply
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("after %q: %q is not a JSON-RPC message", line, lines.Text())
		}
		return r
	}
	if r := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line, id string
		code     int
	}{
		{`this is not JSON`, "null", -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, "null", -32700},
		{`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, "3", -32600},
		{`{"id":"four","method":"tools/list"}`, `"four"`, -32600},
		{`{"jsonrpc":"2.0"}`, "null", -32600},
		{`[]`, "null", -32600},
		// Issue 49, row 9: a batch ended the process.
		{`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "null", -32600},
		{`[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`, "null", -32600},
	} {
		r := exchange(c.line)
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%s: got id %s error %+v, want id %s code %d", c.line, r.ID, r.Error, c.id, c.code)
		}
		// The session goes on.
		if r := exchange(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); r.Error != nil || !strings.Contains(string(r.Result), "lookup_spell") {
			t.Fatalf("tools/list after %s: error %+v", c.line, r.Error)
		}
	}
}

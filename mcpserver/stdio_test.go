package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
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

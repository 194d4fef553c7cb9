package mcpserver_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"lorekeeper.dev/mcpserver"
)

// conformanceVersion is the official MCP conformance suite run by
// TestConformance; 0.1.12 runs on Node 20.
const conformanceVersion = "@modelcontextprotocol/conformance@0.1.12"

// conformanceScenarios are the suite's server scenarios whose features
// LoreKeeper offers: tools, prompts, completion and resources. The others
// need the suite's own test tools, prompts or resources by name
// (tools-call-*, prompts-get-*, resources-read-*, resources-templates-read,
// json-schema-2020-12), or features LoreKeeper does not have
// (subscriptions, elicitation, sampling). completion-complete asks to
// complete an argument of a prompt of the suite's, which LoreKeeper answers
// with an invalid params error naming its own prompts (the suite counts any
// error as a failure); TestCompletion tests LoreKeeper's completions.
var conformanceScenarios = []string{
	"server-initialize",
	"tools-list",
	"ping",
	"logging-set-level",
	"resources-list",
	"prompts-list",
	"dns-rebinding-protection",
	"server-sse-multiple-streams",
	"server-sse-polling",
}

// TestConformance runs the official conformance suite against the HTTP
// handler on a real loopback listener. It needs npx (Node 20 and the npm
// registry, or an npm cache holding the suite); without npx it skips.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance suite skipped in -short mode")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx not found: the MCP conformance suite needs Node.js")
	}
	for _, mode := range []struct {
		name      string
		stateless bool
		scenarios []string
	}{
		{"stateful", false, conformanceScenarios},
		// Stateless mode has no standalone SSE stream and no sessions.
		{"stateless", true, conformanceScenarios[:7]},
	} {
		t.Run(mode.name, func(t *testing.T) {
			runConformance(t, npx, &mcpserver.HTTPOptions{Stateless: mode.stateless}, mode.scenarios)
		})
	}
}

func runConformance(t *testing.T, npx string, opts *mcpserver.HTTPOptions, scenarios []string) {
	h := newServer(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h.srv.HTTPHandler(opts))
	srv := &http.Server{Handler: mux}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + lis.Addr().String() + "/mcp"

	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, npx, "-y", conformanceVersion, "server", "--url", url, "--scenario", sc)
			cmd.Dir = t.TempDir() // the suite writes its results there
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("scenario %s failed: %v\n%s", sc, err, out)
			}
			if strings.Contains(string(out), "FAILURE") || strings.Contains(string(out), "Failed: ") && !strings.Contains(string(out), "Failed: 0") {
				t.Errorf("scenario %s reports failures:\n%s", sc, out)
			}
			t.Logf("%s:\n%s", sc, out)
		})
	}
}

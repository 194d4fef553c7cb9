package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

func TestHTTPHandler_Transports(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts *mcpserver.HTTPOptions
	}{
		{"stateful", nil},
		{"stateless", &mcpserver.HTTPOptions{Stateless: true}},
		{"stateless json", &mcpserver.HTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newServer(t)
			cs := connectHTTP(t, h.srv.HTTPHandler(tt.opts), "")
			if got := cs.InitializeResult().ServerInfo; got.Name != "lorekeeper" || got.Version != "test" {
				t.Errorf("server info = %+v", got)
			}
			for _, tool := range allTools {
				mustOK(t, callTool(t, cs, tool.name, tool.args))
			}
			res := callTool(t, cs, "lookup_spell", map[string]any{"name": "fireball"})
			wantContains(t, text(res), "## Fireball")
			if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball"}); err != nil {
				t.Errorf("read resource: %v", err)
			}
			res = callTool(t, cs, "lookup_spell", map[string]any{"school": "pyromancy"})
			if !res.IsError {
				t.Errorf("invalid argument over HTTP: not an error result")
			}
		})
	}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends a raw initialize request with the given headers.
func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

func TestHTTPHandler_Guards(t *testing.T) {
	h := newServer(t)
	tests := []struct {
		name string
		opts *mcpserver.HTTPOptions
		body string
		hdr  map[string]string
		want int
	}{
		{"loopback host", nil, initBody, nil, http.StatusOK},
		{"localhost host", nil, initBody, map[string]string{"Host": "localhost:8080"}, http.StatusOK},
		{"rebinding host", nil, initBody, map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{"localhost subdomain", nil, initBody, map[string]string{"Host": "evil.localhost"}, http.StatusForbidden},
		{"localhost subdomain with port", nil, initBody, map[string]string{"Host": "evil.localhost:7412"}, http.StatusForbidden},
		{"localhost subdomain allowed", &mcpserver.HTTPOptions{AllowedHosts: []string{"app.localhost"}}, initBody, map[string]string{"Host": "app.localhost:7412"}, http.StatusOK},
		{"localhost trailing dot", nil, initBody, map[string]string{"Host": "localhost.:7412"}, http.StatusOK},
		{"ipv6 loopback", nil, initBody, map[string]string{"Host": "[::1]:7412"}, http.StatusOK},
		{"rebinding host with port", nil, initBody, map[string]string{"Host": "evil.example.com:80"}, http.StatusForbidden},
		{"allowed host", &mcpserver.HTTPOptions{AllowedHosts: []string{"mcp.example.com"}}, initBody, map[string]string{"Host": "mcp.example.com:443"}, http.StatusOK},
		{"other host with allowed hosts", &mcpserver.HTTPOptions{AllowedHosts: []string{"mcp.example.com"}}, initBody, map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{"loopback origin", nil, initBody, map[string]string{"Origin": "http://localhost:6274"}, http.StatusOK},
		{"foreign origin", nil, initBody, map[string]string{"Origin": "https://evil.example.com"}, http.StatusForbidden},
		{"localhost subdomain origin", nil, initBody, map[string]string{"Origin": "http://evil.localhost:6274"}, http.StatusForbidden},
		{"allowed origin", &mcpserver.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}}, initBody, map[string]string{"Origin": "https://app.example.com"}, http.StatusOK},
		{"token missing", &mcpserver.HTTPOptions{BearerToken: "s3cret"}, initBody, nil, http.StatusUnauthorized},
		{"token wrong", &mcpserver.HTTPOptions{BearerToken: "s3cret"}, initBody, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"token right", &mcpserver.HTTPOptions{BearerToken: "s3cret"}, initBody, map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
		{"body too large", &mcpserver.HTTPOptions{MaxRequestBytes: 512}, initBody[:len(initBody)-1] + `,"pad":"` + strings.Repeat("x", 1024) + `"}`, nil, http.StatusRequestEntityTooLarge},
		{"body within limit", &mcpserver.HTTPOptions{MaxRequestBytes: 512}, initBody, nil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(h.srv.HTTPHandler(tt.opts))
			defer ts.Close()
			code, body := post(t, ts.URL, tt.body, tt.hdr)
			if code != tt.want {
				t.Errorf("status = %d, want %d; body %q", code, tt.want, body)
			}
			if tt.want == http.StatusOK && !strings.Contains(body, `"serverInfo"`) {
				t.Errorf("no initialize result: %q", body)
			}
		})
	}

	t.Run("client with token", func(t *testing.T) {
		cs := connectHTTP(t, h.srv.HTTPHandler(&mcpserver.HTTPOptions{BearerToken: "s3cret", Stateless: true}), "s3cret")
		mustOK(t, callTool(t, cs, "list_documents", nil))
	})
}

// TestHTTPHandler_SessionLogs: sessions come and go all day; their
// lifecycle lines are debug detail, not INFO (25,000 sessions once wrote
// 4.4 MB of log).
func TestHTTPHandler_SessionLogs(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			logs := &syncBuffer{}
			h := newServer(t)
			srv := mcpserver.New(startQuery(t, h.fake), &mcpserver.Options{
				Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level})),
			})
			for _, opts := range []*mcpserver.HTTPOptions{nil, {Stateless: true}} {
				cs := connectHTTP(t, srv.HTTPHandler(opts), "")
				mustOK(t, callTool(t, cs, "list_documents", nil))
				if err := cs.Close(); err != nil {
					t.Fatal(err)
				}
			}
			got := logs.String()
			sessionLines := 0
			for _, line := range strings.Split(got, "\n") {
				if !strings.Contains(line, "session") {
					continue
				}
				sessionLines++
				if !strings.Contains(line, "level=DEBUG") {
					t.Errorf("session line above debug: %s", line)
				}
			}
			if level == slog.LevelDebug && sessionLines == 0 {
				t.Errorf("no session lines at debug level; log:\n%s", got)
			}
		})
	}
}

// TestServer_CloseSessions: an HTTP server shutting down waits for open
// requests, and a connected client keeps a standalone SSE stream open for
// as long as its session lives; closing the sessions at shutdown ends
// those streams, so Shutdown finishes instead of running into its deadline.
func TestServer_CloseSessions(t *testing.T) {
	for _, clients := range []int{0, 1, 8} {
		t.Run(fmt.Sprintf("%d clients", clients), func(t *testing.T) {
			h := newServer(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hs := &http.Server{Handler: h.srv.HTTPHandler(nil)}
			hs.RegisterOnShutdown(h.srv.CloseSessions)
			go hs.Serve(ln)
			url := "http://" + ln.Addr().String() + "/mcp"
			for range clients {
				cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
				mustOK(t, callTool(t, cs, "list_documents", nil))
			}
			waitFor(t, func() bool { return countSessions(h.srv) == clients })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := hs.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown with %d clients connected: %v", clients, err)
			}
			if n := countSessions(h.srv); n != 0 {
				t.Errorf("%d sessions left after shutdown", n)
			}
		})
	}
}

// countSessions counts the initialized sessions, those the session bound
// counts: a client's stateless probe (server/discover) holds a session of
// its own until the SDK drops it, just after answering, which counted as a
// fourth open session once in about sixty runs.
func countSessions(s *mcpserver.Server) int {
	n := 0
	for ss := range s.MCP().Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 5s")
}

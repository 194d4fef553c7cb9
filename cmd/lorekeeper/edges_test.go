package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// catalogueMCPHTTP serves MCP over HTTP, as up does, over the snapshot's
// creatures, with cfg's bounds.
func catalogueMCPHTTP(t *testing.T, cfg *mcpHTTPFlags) string {
	t.Helper()
	svc := query.NewService(snapshotStore(t, lkv1.Kind_KIND_CREATURE), nil, &query.Options{Version: "test"})
	client := lkv1.NewQueryServiceClient(query.NewInProcessConn(svc, nil))
	cfg.addr = "127.0.0.1:0"
	m, err := serveMCPHTTP(t.Context(), newSupervisor(t.Context(), testLogger(t)), client, cfg, prometheus.NewRegistry(), nil, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.close(ctx)
	})
	return m.url
}

// rawPOST writes one MCP POST on c (a session's, when sid is set).
func rawPOST(t *testing.T, c net.Conn, url, sid, body string) {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	hdr := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	if sid != "" {
		hdr += "Mcp-Session-Id: " + sid + "\r\nMcp-Protocol-Version: 2025-03-26\r\n"
	}
	if _, err := fmt.Fprintf(c, "%sContent-Length: %d\r\n\r\n%s", hdr, len(body), body); err != nil {
		t.Fatal(err)
	}
}

// TestMCPHTTP_SlowClients covers issue 49, rows 6 and 7 on the listener up
// serves: a request whose body dribbles in is cut at the read timeout, and
// a client that asks for large answers and never reads them is dropped at
// the write timeout, so its calls end, its session can be closed for
// another client's (it held the only slot, and memory, for as long as its
// sockets stayed open), and the goroutines it held are gone.
func TestMCPHTTP_SlowClients(t *testing.T) {
	url := catalogueMCPHTTP(t, &mcpHTTPFlags{maxSessions: 1, readTimeout: 500 * time.Millisecond, writeTimeout: 500 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	goroutines := runtime.NumGoroutine()

	t.Run("a dribbled body is cut", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
		closed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, c)
			close(closed)
		}()
		for i := 0; ; i++ {
			select {
			case <-closed:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if i == 100 {
				t.Fatal("a request dribbling its body a byte every 200 ms is still open after 20 s")
			}
			_, _ = c.Write([]byte(" "))
		}
	})

	t.Run("a client that does not read is dropped", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		rawPOST(t, c, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"no-reader","version":"1"}}}`)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %v %v", resp, err)
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		resp.Body.Close()
		// Batches of the largest answers, on connections never read.
		call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup_creature","arguments":{"cr_min":0,"limit":100,"detail":"full"}}}`
		for k := range 8 {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4 << 10)
			}
			msgs := make([]string, 10)
			for i := range msgs {
				msgs[i] = fmt.Sprintf(call, 100*k+i+2)
			}
			rawPOST(t, conn, url, sid, "["+strings.Join(msgs, ",")+"]")
		}
		// Its session frees up once its calls are dropped: a new client
		// gets the only slot.
		deadline := time.Now().Add(30 * time.Second)
		for {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "reader", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
			if err == nil {
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup_creature", Arguments: map[string]any{"name": "goblin"}}); err != nil {
					t.Errorf("the new client: %v", err)
				}
				cs.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a new client is still refused 30 s after a client stopped reading: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > goroutines+10 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+10 {
		t.Errorf("%d goroutines after the slow clients, %d before", n, goroutines)
	}
}

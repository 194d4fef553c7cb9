package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMCPHTTP_CloseWithClientsConnected: MCP clients keep a standalone SSE
// stream open; stopping the role must end them rather than wait for them
// (it once waited until the 30 s shutdown deadline, and the process exited
// with "context deadline exceeded").
func TestMCPHTTP_CloseWithClientsConnected(t *testing.T) {
	for _, clients := range []int{0, 1, 8} {
		t.Run(fmt.Sprintf("%d clients", clients), func(t *testing.T) {
			// Sessions open without the query service: initialize and the
			// SSE stream never call it.
			m, err := startMCPHTTP(t.Context(), newSupervisor(t.Context(), testLogger(t)), "127.0.0.1:1", nil, "", &mcpHTTPFlags{addr: "127.0.0.1:0"}, prometheus.NewRegistry(), nil, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			for range clients {
				c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
				cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: m.url, MaxRetries: -1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				if err := cs.Ping(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
			}
			// A bound, not a timing assertion: without it a hang would last
			// as long as the streams.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := m.close(ctx); err != nil {
				t.Errorf("close with %d clients connected: %v", clients, err)
			}
		})
	}
}

// TestEmbeddedNATS_PortTaken: a taken --nats-listen port is an error at
// once, naming the address (it once meant 30 s of silence first).
func TestEmbeddedNATS_PortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	done := make(chan error, 1)
	go func() {
		ns, err := embeddedNATS(t.TempDir(), addr, "", testLogger(t))
		if ns != nil {
			ns.Shutdown()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "set --nats-listen to a free port") {
			t.Errorf("err = %v, want one naming %s and the --nats-listen remedy", err, addr)
		}
	case <-time.After(10 * time.Second): // a hang bound, not a timing assertion
		t.Fatal("still starting 10 s later on a taken port")
	}
}

package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// TestStatus_NATSDown: with the node's NATS down, lorekeeper status
// --grpc-addr NODE shows the node's own state and "NATS: not connected"
// (the row 12: it failed after 10 s, "Query node: unreachable").
func TestStatus_NATSDown(t *testing.T) {
	port := freePort(t)
	ns := startNATSOn(t, port)
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.EnsureResources(t.Context(), js, 1); err != nil {
		t.Fatal(err)
	}
	st, err := badgerstore.Open(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Apply(t.Context(), []badgerstore.Write{{Entity: &lkv1.Entity{
		Key: "open5e_v2:srd-2014:condition:prone", Kind: lkv1.Kind_KIND_CONDITION, Name: "Prone", Slug: "prone",
		Document: &lkv1.Document{Key: "srd-2014", Name: "Systems Reference Document", Source: lkv1.Source_SOURCE_OPEN5E_V2},
	}}}); err != nil {
		t.Fatal(err)
	}
	svc := query.NewService(st, nil, &query.Options{
		Version:     "test",
		IngestState: func(ctx context.Context) *lkv1.NodeIngestState { return nodeIngestState(ctx, js) },
	})
	srv := query.NewServer(svc, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	status := func() (string, error) {
		var out, errOut bytes.Buffer
		err := runStatus(t.Context(), []string{"--grpc-addr", ln.Addr().String(), "--timeout", "10s"}, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	out, err := status()
	if err != nil || !strings.Contains(out, "entities 1") || strings.Contains(out, "not connected") {
		t.Fatalf("with NATS up: %v\n%s", err, out)
	}

	ns.Shutdown()
	waitUntil(t, "the node's NATS connection to drop", func() bool { return !nc.IsConnected() })
	out, err = status()
	if err != nil {
		t.Fatalf("with NATS down: %v\n%s", err, out)
	}
	for _, want := range []string{"Query node (test)", "entities 1", "condition", "NATS: not connected", "127.0.0.1:" + strconv.Itoa(port)} {
		if !strings.Contains(out, want) {
			t.Errorf("with NATS down, status lacks %q:\n%s", want, out)
		}
	}
}

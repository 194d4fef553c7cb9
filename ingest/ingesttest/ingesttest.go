// Package ingesttest starts what the tests of ingestion and of its
// consumers share: an in-process NATS server with JetStream on a free
// loopback port, storing in the test's temporary directory.
package ingesttest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
)

// Server starts an in-process nats-server with JetStream, shut down when
// the test ends. opts may be nil; the address, JetStream, the store
// directory, logging and signals are set here whatever it says.
func Server(tb testing.TB, opts *server.Options) *server.Server {
	tb.Helper()
	var o server.Options
	if opts != nil {
		o = *opts
	}
	o.Host, o.Port = "127.0.0.1", -1
	o.JetStream, o.StoreDir = true, tb.TempDir()
	o.NoLog, o.NoSigs = true, true
	s, err := server.NewServer(&o)
	if err != nil {
		tb.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats-server not ready")
	}
	tb.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// Connect returns a JetStream client of the server at url, closed when
// the test ends.
func Connect(tb testing.TB, url string) jetstream.JetStream {
	tb.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// JetStream starts a server (Server with opts) and returns a client with
// ingest's stream and buckets created.
func JetStream(tb testing.TB, opts *server.Options) jetstream.JetStream {
	tb.Helper()
	js := Connect(tb, Server(tb, opts).ClientURL())
	if err := ingest.EnsureResources(tb.Context(), js, 1); err != nil {
		tb.Fatal(err)
	}
	return js
}

package main

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
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
		IngestState: newIngestStateReader(js).state,
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

// A node reads ingest's state bucket again only when it has changed: an
// unchanged bucket is answered from the last read (list_documents asks on
// each first page, and a read decodes every entity's hash); a new import
// state, and a bucket made anew, are read.
func TestIngestStateReader_readsOnlyChanges(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	put := func(object string) {
		t.Helper()
		kv, err := js.KeyValue(t.Context(), ingest.StateBucket)
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(&lkv1.ImportState{Object: object, Status: lkv1.ImportState_STATUS_FAILED, Error: "broken", EntityKeys: []string{"k"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(t.Context(), orcbrew.StateKey(object), b); err != nil {
			t.Fatal(err)
		}
	}
	objects := func(st *lkv1.NodeIngestState) []string {
		var out []string
		for _, is := range st.GetOrcbrew() {
			if len(is.GetEntityKeys()) != 0 {
				t.Errorf("%s: entity keys reported", is.GetObject())
			}
			out = append(out, is.GetObject())
		}
		return out
	}
	r := newIngestStateReader(js)
	for _, step := range []struct {
		name  string
		do    func()
		want  []string
		reads int
	}{
		{"first read", func() { put("a.orcbrew") }, []string{"a.orcbrew"}, 1},
		{"unchanged", func() {}, []string{"a.orcbrew"}, 1},
		{"unchanged again", func() {}, []string{"a.orcbrew"}, 1},
		{"a new import state", func() { put("b.orcbrew") }, []string{"a.orcbrew", "b.orcbrew"}, 2},
		{"the same state written again", func() { put("b.orcbrew") }, []string{"a.orcbrew", "b.orcbrew"}, 3},
		{"the bucket made anew", func() {
			if err := js.DeleteKeyValue(t.Context(), ingest.StateBucket); err != nil {
				t.Fatal(err)
			}
			if err := ingest.EnsureResources(t.Context(), js, 1); err != nil {
				t.Fatal(err)
			}
		}, nil, 4},
	} {
		step.do()
		st := r.state(t.Context())
		if got := objects(st); st.GetError() != "" || !slices.Equal(got, step.want) {
			t.Errorf("%s: imports %v (error %q), want %v", step.name, got, st.GetError(), step.want)
		}
		if r.reads != step.reads {
			t.Errorf("%s: %d reads of the bucket, want %d", step.name, r.reads, step.reads)
		}
		if st.GetNatsUrl() == "" {
			t.Errorf("%s: no NATS URL", step.name)
		}
	}
}

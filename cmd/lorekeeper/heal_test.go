package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// logRecorder passes a role's log to the test's and keeps it, to look for
// what the role said.
type logRecorder struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	return testWriter{l.t}.Write(p)
}

// since returns what was logged from offset on, and the new offset.
func (l *logRecorder) since(off int) (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	return s[off:], len(s)
}

func httpReady(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestSplitRoles_StreamLost covers row 7 of issue 24 with the roles as
// they are deployed (ingest and node, each its own process in the
// command's terms, on a NATS server of their own): the ENTITIES stream is
// deleted, then the NATS server restarts with its store wiped. Each time
// the roles notice, make the stream (and the buckets) again, say so, the
// resync publishes the catalogue again in full, and the node ends holding
// it, its later events included. (What /readyz says meanwhile lasts too
// short here to be caught reliably: TestStreamWatch_Readiness and the
// replica's tests check it.)
func TestSplitRoles_StreamLost(t *testing.T) {
	opts := &natsserver.Options{
		ServerName: "lorekeeper-heal", Host: "127.0.0.1", Port: freePort(t), JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true, MaxPayload: 8 << 20,
	}
	var ns *natsserver.Server
	startNATS := func() {
		o := *opts
		var err error
		if ns, err = natsserver.NewServer(&o); err != nil {
			t.Fatal(err)
		}
		ns.Start()
		if !ns.ReadyForConnections(30 * time.Second) {
			t.Fatal("nats-server not ready")
		}
	}
	startNATS()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	url := "nats://127.0.0.1:" + strconv.Itoa(opts.Port)
	common := []string{"--nats-url", url, "--log-level", "warn"}

	ingestMetrics := loopbackAddr(t)
	ingestLog, nodeLog := &logRecorder{t: t}, &logRecorder{t: t}
	startRole(t, func(ctx context.Context) error {
		return runIngest(ctx, append([]string{"--metrics-addr", ingestMetrics, "--orcbrew-dir", "",
			"--open5e-url", "snapshot", "--open5e-endpoints", "v2/conditions"}, common...), ingestLog)
	})
	// dir: status reads the node's gRPC token there.
	node := &clusterNode{name: "node", grpcAddr: loopbackAddr(t), metricsAddr: loopbackAddr(t), dir: t.TempDir()}
	node.args = append([]string{"--grpc-addr", node.grpcAddr, "--metrics-addr", node.metricsAddr,
		"--data-dir", node.dir, "--model-dir", testModelDir(t)}, common...)
	startRole(t, func(ctx context.Context) error { return runNode(ctx, node.args, nodeLog) })

	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	entities := func() uint64 {
		s, ok := node.status(t)
		if !ok {
			return 0
		}
		return s.GetEntities()
	}
	msgs := func() uint64 {
		s, err := js.Stream(t.Context(), ingest.StreamName)
		if err != nil {
			return 0
		}
		info, err := s.Info(t.Context())
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	var want uint64
	waitUntilFor(t, 5*time.Minute, "the node to hold the conditions", func() bool {
		want = msgs()
		return want > 0 && entities() == want && httpReady(node.metricsAddr) && httpReady(ingestMetrics)
	})
	// A homebrew-like event after the loss must be stored too: publish one
	// more condition, made up, each time.
	extra := func(name string) {
		t.Helper()
		e := &lkv1.Entity{Key: "open5e_v2:test-doc:condition:" + name, Slug: name, Name: name, Kind: lkv1.Kind_KIND_CONDITION,
			Document: &lkv1.Document{Key: "test-doc", Name: "Test", Source: lkv1.Source_SOURCE_OPEN5E_V2}, Description: "made up"}
		if e.ContentHash, err = ingest.ContentHash(e); err != nil {
			t.Fatal(err)
		}
		m, err := ingest.UpsertMsg(e, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}

	var ingestAt, nodeAt int
	for _, loss := range []string{"stream deleted", "NATS restarted with its store wiped"} {
		switch loss {
		case "stream deleted":
			if err := js.DeleteStream(t.Context(), ingest.StreamName); err != nil {
				t.Fatal(err)
			}
		default:
			ns.Shutdown()
			ns.WaitForShutdown()
			if err := os.RemoveAll(opts.StoreDir); err != nil {
				t.Fatal(err)
			}
			startNATS()
		}
		waitUntilFor(t, 5*time.Minute, loss+": the catalogue published and stored again", func() bool {
			// The stream made again holds the catalogue alone: the extra
			// event went with the old one, and the node's store with it.
			return msgs() == want && entities() == want && httpReady(node.metricsAddr) && httpReady(ingestMetrics)
		})
		var said string
		said, ingestAt = ingestLog.since(ingestAt)
		if !strings.Contains(said, "publishing the catalogue again") {
			t.Errorf("%s: the ingest role never said it noticed and published the catalogue again", loss)
		}
		// The catalogue may be back in the new stream before the node
		// notices its consumer is gone (a store already holding as many
		// entities passes the wait above): its word is waited for too.
		deadline := time.Now().Add(time.Minute)
		for said = ""; ; time.Sleep(250 * time.Millisecond) {
			var more string
			more, nodeAt = nodeLog.since(nodeAt)
			said += more
			if strings.Contains(said, "rebuilding the store from the stream") && strings.Contains(said, "was made again") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the node never said it rebuilt its store from the stream made again", loss)
			}
		}
		waitUntilFor(t, 5*time.Minute, loss+": the node's store rebuilt", func() bool {
			return entities() == want && httpReady(node.metricsAddr)
		})
		extra(strings.ReplaceAll(loss, " ", "-"))
		waitUntilFor(t, time.Minute, loss+": an event after it stored", func() bool { return entities() == want+1 })
		t.Logf("%s: healed, %d entities", loss, want+1)
	}
}

// TestStreamWatch_Readiness: the stream watch of a process that ingests
// makes a lost stream and state bucket again and is not ready, saying so,
// until the resync has published the catalogue into the new stream.
func TestStreamWatch_Readiness(t *testing.T) {
	ctx := t.Context()
	js := ingesttest.JetStream(t, nil)
	if err := ingest.EnsureResources(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	base, stop, err := open5eBase("snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	eps, err := (&ingestFlags{endpoints: "v2/conditions"}).selectedEndpoints()
	if err != nil {
		t.Fatal(err)
	}
	f, err := open5e.NewFetcher(js, base, &open5e.Options{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	w := &streamWatch{js: js, fetcher: f, log: testLogger(t)}
	w.look(ctx)
	if err := w.check(ctx); err != nil {
		t.Fatalf("ready before any loss: %v", err)
	}
	if err := js.DeleteStream(ctx, ingest.StreamName); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteKeyValue(ctx, ingest.StateBucket); err != nil {
		t.Fatal(err)
	}
	w.look(ctx)
	err = w.check(ctx)
	if err == nil || !strings.Contains(err.Error(), "the stream ENTITIES and the state bucket LOREKEEPER_STATE lost at") ||
		!strings.Contains(err.Error(), "publishing the catalogue again") {
		t.Fatalf("after the loss: %v, want not ready saying what was lost", err)
	}
	if _, err := js.Stream(ctx, ingest.StreamName); err != nil {
		t.Errorf("the stream was not made again: %v", err)
	}
	if _, err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.check(ctx); err != nil {
		t.Errorf("after the resync: %v, want ready", err)
	}
}

// TestStandalone_rebuildsALostStore covers row 2 of issue 24 for the
// desktop setup: the store deleted between two starts, the standalone
// server tells its client it is rebuilding from the stream, and only then
// that it is ready, with as many entities as before (it once said "ready:
// 0 entities").
func TestStandalone_rebuildsALostStore(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LOREKEEPER_MODEL_DIR=" + testModelDir(t)}
	dataDir := filepath.Join(home, ".local", "share", "lorekeeper")
	readyCount := func(p *desktopProcess) string {
		t.Helper()
		waitUntilFor(t, 5*time.Minute, "the ready message", func() bool { return p.logged("LoreKeeper is ready") })
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range p.logs {
			if strings.HasPrefix(l, "LoreKeeper is ready") {
				return l
			}
		}
		return ""
	}
	first := startDesktopSyncing(t, bin, env, "v2/conditions")
	want := readyCount(first)
	first.stop(t)
	if err := os.RemoveAll(filepath.Join(dataDir, "badger")); err != nil {
		t.Fatal(err)
	}
	second := startDesktopSyncing(t, bin, env, "v2/conditions")
	got := readyCount(second)
	if got != want {
		t.Errorf("after the store was deleted: %q, want %q as before", got, want)
	}
	if !second.logged("rebuilding its store from the stream") {
		t.Errorf("the client was never told of the rebuild; messages: %q", second.logs)
	}
	second.stop(t)
}

package open5e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
)

// secondProcess is another connection to the same server, standing for
// another process: closing it is what a kill -9 of that process does.
func secondProcess(t *testing.T, js jetstream.JetStream) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(js.Conn().ConnectedUrl())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js2, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js2
}

func putLease(t *testing.T, js jetstream.JetStream, v map[string]any) {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if _, err := kv.Put(context.Background(), open5e.LeaseKey, b); err != nil {
		t.Fatal(err)
	}
}

// TestFetcher_Sync_leaseAfterCrash: a process killed during its first
// publish leaves its lease behind; the run that comes next must not wait
// for that lease to expire.
func TestFetcher_Sync_leaseAfterCrash(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)

	// The first process starts a run and hangs in it (its first page never
	// comes), holding the lease; then it dies.
	hang := make(chan struct{})
	defer close(hang)
	up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return true
	}, nil, nil)
	nc1, js1 := secondProcess(t, js)
	first := fetcher(t, js1, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions"), Holder: "first", Node: "node-a"})
	firstDone := make(chan error, 1)
	go func() { _, err := first.Sync(context.Background()); firstDone <- err }()
	kv, err := js.KeyValue(context.Background(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := kv.Get(context.Background(), open5e.LeaseKey); err == nil {
			break
		}
		if i == 1000 {
			t.Fatal("the first run never took the lease")
		}
		time.Sleep(10 * time.Millisecond)
	}
	up.set(nil, nil, nil)

	// While it lives, another node is refused.
	other := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions"), Holder: "other", Node: "node-b"})
	_, err = other.Sync(context.Background())
	var held *open5e.LeaseHeldError
	if !errors.As(err, &held) || held.Holder != "first" || !errors.Is(err, open5e.ErrLeaseHeld) {
		t.Fatalf("with the holder alive: %v, want a LeaseHeldError naming \"first\"", err)
	}

	nc1.Close() // kill -9
	<-firstDone
	sum, err := other.Sync(context.Background())
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	if got := sum.Totals().New; got != v2Conditions(t) {
		t.Errorf("after the holder died: %d new, want %d", got, v2Conditions(t))
	}
	if _, err := kv.Get(context.Background(), open5e.LeaseKey); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("lease not released: %v", err)
	}
}

func TestFetcher_Sync_leaseLeftBehind(t *testing.T) {
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name     string
		lease    map[string]any
		node     string
		answer   bool // someone answers on the lease's ping subject
		wantHeld bool
	}{
		{name: "holder gone", lease: map[string]any{"holder": "crashed", "ping": "_INBOX.gone", "expires": later}},
		{name: "this node restarted", lease: map[string]any{"holder": "crashed", "node": "node-a", "expires": later}, node: "node-a"},
		{name: "holder alive", lease: map[string]any{"holder": "alive", "ping": "_INBOX.alive", "expires": later}, answer: true, wantHeld: true},
		{name: "another node, no ping", lease: map[string]any{"holder": "old", "node": "node-b", "expires": later}, node: "node-a", wantHeld: true},
		{name: "holder alive on this node", lease: map[string]any{"holder": "alive", "node": "node-a", "ping": "_INBOX.alive", "expires": later}, node: "node-a", answer: true},
		{name: "expired", lease: map[string]any{"holder": "old", "ping": "_INBOX.alive", "expires": time.Now().Add(-time.Second)}, answer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			up := newUpstream(t)
			if tt.answer {
				nc, _ := secondProcess(t, js)
				if _, err := nc.Subscribe(tt.lease["ping"].(string), func(m *nats.Msg) { _ = m.Respond([]byte("alive")) }); err != nil {
					t.Fatal(err)
				}
				if err := nc.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			putLease(t, js, tt.lease)
			f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions"), Node: tt.node})
			_, err := f.Sync(context.Background())
			if tt.wantHeld {
				if !errors.Is(err, open5e.ErrLeaseHeld) {
					t.Fatalf("Sync: %v, want ErrLeaseHeld", err)
				}
				if got := streamMsgs(t, js); got != 0 {
					t.Errorf("published %d messages without the lease", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if got := streamMsgs(t, js); got != uint64(v2Conditions(t)) {
				t.Errorf("%d messages, want %d", got, v2Conditions(t))
			}
		})
	}
}

// TestFetcher_Run_leaseEnds: a scheduled run that finds the lease held
// tries again when the lease ends, not after some unrelated backoff.
func TestFetcher_Run_leaseEnds(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	nc, _ := secondProcess(t, js)
	if _, err := nc.Subscribe("_INBOX.alive", func(m *nats.Msg) { _ = m.Respond([]byte("alive")) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A live holder whose lease ends in a second without being renewed.
	putLease(t, js, map[string]any{"holder": "alive", "ping": "_INBOX.alive", "expires": time.Now().Add(time.Second)})
	done := make(chan struct{})
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints: endpoints("v2/conditions"), Interval: 24 * time.Hour, EndpointBackoff: time.Hour,
		Progress: func(p open5e.Progress) {
			if p.Finished {
				close(done)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no run within 30 s of a lease that ended after 1 s")
	}
	if got := streamMsgs(t, js); got != uint64(v2Conditions(t)) {
		t.Errorf("%d messages, want %d", got, v2Conditions(t))
	}
}

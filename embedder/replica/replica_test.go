package replica_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/replica"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestReplica_Lifecycle opens a replica on a real stream, store and model,
// runs it until it has stored what was published, reports readiness by
// its lag, and reopens the same directory with what it stored intact.
func TestReplica_Lifecycle(t *testing.T) {
	ctx := t.Context()
	js := ingesttest.JetStream(t, nil)
	es := firstEntities(t, 40)
	publish(t, js, es)
	dir := t.TempDir()
	var caughtUp atomic.Int32
	opts := &replica.Options{ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 5,
		ProgressEvery: 20 * time.Millisecond, CaughtUp: func() { caughtUp.Add(1) }}

	rep, err := replica.Open(ctx, js, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rep.Run(runCtx) }()

	deadline := time.Now().Add(2 * time.Minute)
	for rep.Store().Stats().Entities < len(es) || rep.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("stored %d of %d, pending %d", rep.Store().Stats().Entities, len(es), rep.Pending())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := rep.Ready(ctx); err != nil {
		t.Errorf("Ready after catching up: %v", err)
	}
	for deadline := time.Now().Add(time.Minute); caughtUp.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("caught up, but Options.CaughtUp was not called")
		}
	}
	if got, err := rep.Store().VectorIndex().Count(ctx); err != nil || got != len(es) {
		t.Errorf("vectors = %d, %v; want %d", got, err, len(es))
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// A second incarnation on the same directory finds everything stored
	// (the embedded index reloaded from Badger) and applies what arrived
	// while it was down.
	for _, e := range es[:10] {
		e.Name += " (revised)"
		if e.ContentHash, err = ingest.ContentHash(e); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, js, es[:10])
	rep, err = replica.Open(ctx, js, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	<-rep.Store().Loaded() // the index is built in the background
	if got := rep.Store().Stats().Entities; got != len(es) {
		t.Errorf("reopened store holds %d entities, want %d", got, len(es))
	}
	if got, err := rep.Store().VectorIndex().Count(ctx); err != nil || got != len(es) {
		t.Errorf("reopened index holds %d vectors, %v; want %d", got, err, len(es))
	}
	runCtx, stop = context.WithCancel(ctx)
	go func() { done <- rep.Run(runCtx) }()
	deadline = time.Now().Add(2 * time.Minute)
	for {
		got, err := rep.Store().Get(ctx, es[9].Key)
		if err == nil && got.Name == es[9].Name {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision of %s not applied after restart (got %v, %v)", es[9].Key, got.GetName(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestReplica_ReadyAfterCrash: a process that died holding a fetched,
// unacknowledged batch leaves those messages to come back only when their
// ack wait ends. The next process on the same consumer is not ready until
// it has stored them and everything else, however few they are next to
// MaxPending, and it is not ready before it has even asked the stream.
func TestReplica_ReadyAfterCrash(t *testing.T) {
	ctx := t.Context()
	js := ingesttest.JetStream(t, nil)
	es := firstEntities(t, 100)
	publish(t, js, es)
	rep, err := replica.Open(ctx, js, t.TempDir(), &replica.Options{ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close(context.WithoutCancel(ctx))
	if err := rep.Ready(ctx); err == nil {
		t.Error("ready before asking the stream anything")
	}

	// The process before: fetched 60 messages on the same durable, then died.
	cons, err := js.Consumer(ctx, ingest.StreamName, "embedder")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(60, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fetched := 0
	for range batch.Messages() {
		fetched++
	}
	if fetched != 60 {
		t.Fatalf("fetched %d, want 60", fetched)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rep.Run(runCtx) }()
	defer func() { stop(); <-done }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		stored := rep.Store().Stats().Entities
		err := rep.Ready(ctx)
		if err == nil {
			if stored != len(es) {
				t.Fatalf("ready with %d of %d entities stored (pending %d)", stored, len(es), rep.Pending())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 2 minutes: %v; stored %d of %d", err, stored, len(es))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// publish puts upserts of es on the stream, one acknowledged publish each.
func publish(t *testing.T, js jetstream.JetStream, es []*lkv1.Entity) {
	t.Helper()
	for _, e := range es {
		m, err := ingest.UpsertMsg(e, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
}

package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/embedder/badgerstore/storetest"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/replica"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// snapshot is the whole Open5e snapshot, read once per test binary: under
// the race detector a read costs tens of seconds, and each test takes only
// its first entities.
var snapshot = sync.OnceValues(func() ([]*lkv1.Entity, error) {
	return open5e.SnapshotEntities(context.Background())
})

// firstEntities is the snapshot's first n entities.
func firstEntities(t *testing.T, n int) []*lkv1.Entity {
	t.Helper()
	all, err := snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return all[:n:n] // appending copies: the snapshot is shared
}

// running is a replica running in the background.
type running struct {
	*replica.Replica
	stop func()
}

func start(t *testing.T, js jetstream.JetStream, dir string, opts *replica.Options) *running {
	t.Helper()
	rep, err := replica.Open(t.Context(), js, dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rep.Run(ctx) }()
	r := &running{Replica: rep}
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := rep.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		r.stop = func() {}
	}
	t.Cleanup(func() { r.stop() })
	return r
}

// waitReady waits until the replica is ready, and returns every distinct
// reason it gave for not being ready meanwhile.
func (r *running) waitReady(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := r.Ready(t.Context())
		if err == nil {
			break
		}
		seen[err.Error()] = true
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 3 minutes: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *running) holds(t *testing.T, es []*lkv1.Entity) {
	t.Helper()
	st := r.Store().Stats()
	n, err := r.Store().VectorIndex().Count(t.Context())
	if st.Entities != len(es) || st.Vectors != len(es) || err != nil || n != len(es) {
		t.Fatalf("holds %d entities, %d vectors, %d in the index (%v); want %d of each", st.Entities, st.Vectors, n, err, len(es))
	}
	for _, e := range es {
		if _, err := r.Store().Get(t.Context(), e.GetKey()); err != nil {
			t.Fatalf("Get %s: %v", e.GetKey(), err)
		}
	}
}

func sstFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(files) == 0 {
		t.Fatal("no table files in the store")
	}
	sort.Strings(files)
	return files
}

// storedAndStopped publishes es, runs a replica on a new store until it
// holds them, and stops it: the stream, the store's directory, the
// replica's options and its consumer as the stop left it.
func storedAndStopped(t *testing.T, es []*lkv1.Entity) (jetstream.JetStream, string, *replica.Options, jetstream.Consumer) {
	t.Helper()
	js := ingesttest.JetStream(t, nil)
	publish(t, js, es)
	dir := filepath.Join(t.TempDir(), "badger")
	opts := &replica.Options{ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 1000}
	r := start(t, js, dir, opts)
	r.waitReady(t)
	r.holds(t, es)
	r.stop()
	before, err := js.Consumer(t.Context(), ingest.StreamName, "embedder")
	if err != nil {
		t.Fatal(err)
	}
	return js, dir, opts, before
}

// TestReplica_RebuildsFromTheStream covers rows 2-5 of issue 24 on real
// Badger files and a real stream: a store deleted, its MANIFEST deleted,
// bytes flipped in a table, a table truncated. Each time the replica
// reopens, says it is rebuilding and why, is not ready until it has
// replayed the stream, and ends with exactly what the stream holds, its
// vectors from the bundle, none from the model. A healthy restart rebuilds
// nothing and replays nothing.
func TestReplica_RebuildsFromTheStream(t *testing.T) {
	es := firstEntities(t, 120)
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		reason string // in Ready's error; "" for no rebuild
		aside  bool   // the damaged store is set aside
	}{
		{"healthy restart", func(*testing.T, string) {}, "", false},
		{"store deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, "acknowledged the stream up to message 120, but the store holds it only up to 0", false},
		{"MANIFEST deleted", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
		}, "MANIFEST is missing", true},
		{"bytes flipped in a table", func(t *testing.T, dir string) {
			f := sstFiles(t, dir)[0]
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) / 2; i < len(b)/2+8; i++ {
				b[i] ^= 0xff
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "the store was damaged", true},
		{"table truncated", func(t *testing.T, dir string) {
			f := sstFiles(t, dir)[0]
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(f, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "the store was damaged", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js, dir, opts, before := storedAndStopped(t, es)

			c.damage(t, dir)
			reg := prometheus.NewRegistry()
			reopen := *opts
			reopen.Registerer = reg
			r := start(t, js, dir, &reopen)
			rebuilding := r.Rebuilding()
			reasons := r.waitReady(t)
			r.holds(t, es)
			// The store's vectors went with it; the bundle has them all.
			if n := embeddedTexts(t, reg); n != 0 {
				t.Errorf("the model embedded %v texts; want every vector from the bundle", n)
			}
			after, err := js.Consumer(t.Context(), ingest.StreamName, "embedder")
			if err != nil {
				t.Fatal(err)
			}
			replayed := !after.CachedInfo().Created.Equal(before.CachedInfo().Created)
			t.Logf("rebuilding %q; not ready meanwhile: %q", rebuilding, reasons)
			if c.reason == "" {
				if rebuilding != "" || replayed {
					t.Errorf("a healthy restart rebuilt (%q) or replayed the stream (%v)", rebuilding, replayed)
				}
				return
			}
			if !strings.Contains(rebuilding, c.reason) {
				t.Errorf("Rebuilding() = %q, want it to say %q", rebuilding, c.reason)
			}
			if !replayed {
				t.Error("the consumer was not made again: the stream was not replayed")
			}
			saidSo := false
			for _, r := range reasons {
				saidSo = saidSo || strings.HasPrefix(r, "rebuilding from the stream")
			}
			if !saidSo {
				t.Errorf("Ready never said it was rebuilding: %q", reasons)
			}
			if r.Rebuilding() != "" {
				t.Errorf("still rebuilding once ready: %q", r.Rebuilding())
			}
			if _, err := os.Stat(dir + ".damaged"); (err == nil) != c.aside {
				t.Errorf("damaged store set aside: %v, want %v", err == nil, c.aside)
			}
		})
	}
}

// TestReplica_DamageFoundWhileLoading: a store whose damage only reading
// every entity finds (bytes that are no entity, under a count and table
// checksums that agree; the newest value log cut short or deleted, whose
// values read back empty: issue 49, row 2) opens, and its index is built
// in the background; when the load finds the damage, the replica sets the
// store aside and rebuilds it from the stream as for damage found at Open:
// Ready says so until done, the consumer is made again, and the store ends
// with exactly what the stream holds.
func TestReplica_DamageFoundWhileLoading(t *testing.T) {
	es := firstEntities(t, 120)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		why    string // in Rebuilding()
	}{
		{"bytes that are no entity", storetest.DamageEntity, "cannot parse"},
		{"newest value log cut short", func(t *testing.T, dir string) { storetest.CutNewestValueLog(t, dir, false) }, "value log"},
		{"newest value log deleted", func(t *testing.T, dir string) { storetest.CutNewestValueLog(t, dir, true) }, "value log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			js, dir, opts, before := storedAndStopped(t, es)
			c.damage(t, dir)
			r := start(t, js, dir, opts)
			if got := r.Rebuilding(); got != "" {
				t.Fatalf("rebuilding at Open (%q): the damage was to be found by the background load", got)
			}
			waitUntil(t, "the load to find the damage", func() bool { return r.Rebuilding() != "" })
			rebuilding := r.Rebuilding()
			reasons := r.waitReady(t)
			r.holds(t, es)
			t.Logf("rebuilding %q; not ready meanwhile: %q", rebuilding, reasons)
			if !strings.Contains(rebuilding, "the store was damaged") || !strings.Contains(rebuilding, c.why) {
				t.Errorf("Rebuilding() = %q, want it to say the store was damaged and why (%q)", rebuilding, c.why)
			}
			saidSo := false
			for _, r := range reasons {
				saidSo = saidSo || strings.HasPrefix(r, "rebuilding from the stream")
			}
			if !saidSo {
				t.Errorf("Ready never said it was rebuilding: %q", reasons)
			}
			after, err := js.Consumer(t.Context(), ingest.StreamName, "embedder")
			if err != nil {
				t.Fatal(err)
			}
			if after.CachedInfo().Created.Equal(before.CachedInfo().Created) {
				t.Error("the consumer was not made again: the stream was not replayed")
			}
			if _, err := os.Stat(dir + ".damaged"); err != nil {
				t.Errorf("the damaged store was not set aside: %v", err)
			}
			if _, err := r.Store().Get(t.Context(), "open5e_v2:srd-2014:spell:zz-garbled"); err == nil {
				t.Error("the rebuilt store still holds the damaged entry")
			}
		})
	}
}

// TestReplica_StreamOrConsumerLost covers row 7 of issue 24: a running
// replica whose consumer is deleted makes it again and replays the stream
// over its store (which stays whole meanwhile), so later events are
// stored; one whose stream is deleted makes the stream again
// (Options.EnsureStream) and empties its store to match it, until the
// catalogue is published again.
func TestReplica_StreamOrConsumerLost(t *testing.T) {
	es := firstEntities(t, 40)
	for _, what := range []string{"consumer", "stream"} {
		t.Run(what+" deleted", func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			publish(t, js, es[:30])
			var made atomic.Int32
			opts := &replica.Options{ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 1000,
				EnsureStream: func(ctx context.Context) error {
					made.Add(1)
					return ingest.EnsureResources(ctx, js, 1)
				}}
			r := start(t, js, t.TempDir(), opts)
			r.waitReady(t)
			r.holds(t, es[:30])

			var err error
			if what == "consumer" {
				err = js.DeleteConsumer(t.Context(), ingest.StreamName, "embedder")
			} else {
				err = js.DeleteStream(t.Context(), ingest.StreamName)
			}
			if err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the replica to notice", func() bool { return r.Rebuilding() != "" || made.Load() > 0 })
			reasons := r.waitReady(t)
			t.Logf("not ready meanwhile: %q", reasons)
			if what == "stream" {
				if made.Load() == 0 {
					t.Error("the stream was not made again")
				}
				// The stream is empty now: so is the store.
				r.holds(t, nil)
				publish(t, js, es)
			} else {
				publish(t, js, es[30:])
			}
			waitUntil(t, "the events after the loss stored", func() bool { return r.Store().Stats().Entities == len(es) })
			r.waitReady(t)
			r.holds(t, es)
		})
	}
}

// TestReplica_DiskFull covers row 6 of issue 24 with an injected count of
// free space: below the margin the replica stores nothing and is not ready,
// saying the disk is full; when space comes back it stores everything.
func TestReplica_DiskFull(t *testing.T) {
	es := firstEntities(t, 20)
	js := ingesttest.JetStream(t, nil)
	publish(t, js, es)
	var free atomic.Uint64
	free.Store(10 << 20)
	opts := &replica.Options{ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 1000,
		MinFree: 64 << 20, FreeSpace: func(string) (uint64, error) { return free.Load(), nil }}
	r := start(t, js, t.TempDir(), opts)
	waitUntil(t, "not ready for a full disk", func() bool {
		err := r.Ready(t.Context())
		return err != nil && strings.Contains(err.Error(), "disk full: 10.0 MiB free")
	})
	time.Sleep(time.Second)
	if n := r.Store().Stats().Entities; n != 0 {
		t.Errorf("stored %d entities on a full disk", n)
	}
	free.Store(1 << 30)
	r.waitReady(t)
	r.holds(t, es)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

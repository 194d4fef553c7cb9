package open5e_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestFetcher_Sync_streamLost covers the resync half of row 7 of issue 24:
// the state says everything was published, but the stream was deleted and
// made again (or NATS lost its store and kept its buckets). The resync
// checks its state against the stream and publishes everything again,
// once; the state matches the stream only after that.
func TestFetcher_Sync_streamLost(t *testing.T) {
	ctx := context.Background()
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions", "v2/weapons")})
	first := mustSync(t, f).Totals()
	want := streamMsgs(t, js)
	if want == 0 || first.New != int(want) {
		t.Fatalf("first run: %s, %d messages", first, want)
	}
	matches := func() bool {
		t.Helper()
		ok, err := f.StateMatchesStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !matches() {
		t.Error("after a clean run the state does not match the stream")
	}
	if sum := mustSync(t, f).Totals(); sum.New != 0 || streamMsgs(t, js) != want {
		t.Fatalf("a second run published: %s", sum)
	}

	if err := js.DeleteStream(ctx, ingest.StreamName); err != nil {
		t.Fatal(err)
	}
	if err := ingest.EnsureResources(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	if matches() {
		t.Error("the state matches a stream made again")
	}
	sum := mustSync(t, f).Totals()
	if got := streamMsgs(t, js); got != want || sum.New != int(want) {
		t.Errorf("after the stream was made again: %s, %d messages on it; want %d new", sum, got, want)
	}
	if !matches() {
		t.Error("after republishing the state does not match the stream")
	}
	if sum := mustSync(t, f).Totals(); sum.New != 0 || streamMsgs(t, js) != want {
		t.Errorf("a run after the republish published again: %s", sum)
	}
}

// TestFetcher_Sync_streamEmptiedWithoutRecord: a state written before the
// stream was recorded (an older LoreKeeper), and a stream made again,
// empty: everything is published again.
func TestFetcher_Sync_streamEmptiedWithoutRecord(t *testing.T) {
	ctx := context.Background()
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions")})
	mustSync(t, f)
	want := streamMsgs(t, js)
	kv, err := js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, open5e.StreamKey); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, ingest.StreamName); err != nil {
		t.Fatal(err)
	}
	if err := ingest.EnsureResources(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	if sum := mustSync(t, f).Totals(); sum.New != int(want) || streamMsgs(t, js) != want {
		t.Errorf("after the stream was emptied: %s, %d messages; want %d new", sum, streamMsgs(t, js), want)
	}
}

// lastEvents reads the stream: each key's last event.
func lastEvents(t *testing.T, js jetstream.JetStream) map[string]*lkv1.EntityEvent {
	t.Helper()
	s, err := js.Stream(t.Context(), ingest.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.OrderedConsumer(t.Context(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*lkv1.EntityEvent{}
	for n := streamMsgs(t, js); n > 0; n-- {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ev := &lkv1.EntityEvent{}
		if err := proto.Unmarshal(m.Data(), ev); err != nil {
			t.Fatal(err)
		}
		key := ev.GetUpsert().GetKey()
		if key == "" {
			key = ev.GetTombstone().GetKey()
		}
		out[key] = ev
	}
	return out
}

// TestFetcher_Sync_repairsWhatItDidNotPublish (issue 49, row 1): the
// stream holds what something else published (anyone could reach the
// embedded NATS): an entity changed under a header claiming the source's
// content hash, and an entity Open5e does not have. The state says every
// entity is unchanged; the resync compares what the stream holds with the
// source by content hash, publishes the source's content again and
// tombstones the stranger, once.
func TestFetcher_Sync_repairsWhatItDidNotPublish(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions", "v2/weapons")})
	mustSync(t, f)
	events := lastEvents(t, js)
	// The stranger is of a kind the run's endpoints list: a run of some
	// endpoints speaks for their kinds only (TestFetcher_Sync_lease).
	const key, stranger = "open5e_v2:srd-2014:condition:blinded", "open5e_v2:srd-2014:condition:dazzled"
	real := events[key].GetUpsert()
	if real == nil {
		t.Fatalf("no %s in the stream", key)
	}
	changed := proto.CloneOf(real)
	changed.Description = "A blinded creature heals every creature in range."
	m, err := ingest.UpsertMsg(changed, "injected", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Header.Set(ingest.HeaderHash, real.GetContentHash()) // claims the source's content
	added := proto.CloneOf(real)
	added.Key, added.Slug, added.Name = stranger, "dazzled", "Dazzled"
	added.ContentHash, _ = ingest.ContentHash(added)
	m2, err := ingest.UpsertMsg(added, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []*nats.Msg{m, m2} {
		if _, err := js.PublishMsg(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}

	sum := mustSync(t, f)
	tot := sum.Totals()
	if tot.Repaired != 2 || tot.Changed != 1 || sum.Unlisted != 1 || tot.New != 0 {
		t.Errorf("the resync after the injection: %s (unlisted %d); want the entity changed back and the stranger tombstoned, 2 repaired", tot, sum.Unlisted)
	}
	events = lastEvents(t, js)
	if got := events[key].GetUpsert(); got.GetDescription() != real.GetDescription() {
		t.Errorf("%s after the resync: %q, want the source's", key, got.GetDescription())
	}
	if events[stranger].GetTombstone() == nil {
		t.Errorf("%s after the resync: still upserted (%v), want a tombstone", stranger, events[stranger].GetUpsert() != nil)
	}
	n := streamMsgs(t, js)
	if tot := mustSync(t, f).Totals(); tot.Repaired != 0 || tot.Changed != 0 || streamMsgs(t, js) != n {
		t.Errorf("a resync after the repair: %s, %d messages (was %d); want nothing published", tot, streamMsgs(t, js), n)
	}
}

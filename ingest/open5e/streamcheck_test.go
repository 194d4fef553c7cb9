package open5e_test

import (
	"context"
	"testing"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
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

package ingest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func entity(key, hash string) *lkv1.Entity {
	return &lkv1.Entity{
		Key: key, Kind: lkv1.Kind_KIND_SPELL, Name: "Fireball", ContentHash: hash,
		Document: &lkv1.Document{Key: "srd-2014", Source: lkv1.Source_SOURCE_OPEN5E_V2},
	}
}

func TestUpsertMsg(t *testing.T) {
	now := time.Unix(1700000000, 0)
	m, err := ingest.UpsertMsg(entity("open5e_v2:srd-2014:spell:fireball", "aa"), "", now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Subject, "lorekeeper.entity.open5e_v2.spell"; got != want {
		t.Errorf("subject = %q, want %q", got, want)
	}
	idOf := func(hash, gen string) string {
		m, err := ingest.UpsertMsg(entity("open5e_v2:srd-2014:spell:fireball", hash), gen, now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return m.Header.Get(jetstream.MsgIDHeader)
	}
	id := m.Header.Get(jetstream.MsgIDHeader)
	if got := idOf("aa", ""); id == "" || got != id {
		t.Errorf("a retry of the same upsert got IDs %q and %q, want one non-empty ID", id, got)
	}
	if idOf("bb", "") == id {
		t.Error("changed content kept the same Nats-Msg-Id; JetStream would drop it")
	}
	// After a tombstone the publisher passes a new generation: the same
	// content must get a new ID, and a retry of it the same one again.
	if after := idOf("aa", "tombstone 7"); after == id || after != idOf("aa", "tombstone 7") || after == idOf("aa", "tombstone 8") {
		t.Errorf("generations: IDs %q, %q, %q, want a new one per generation and equal ones for one", id, after, idOf("aa", "tombstone 8"))
	}

	for name, e := range map[string]*lkv1.Entity{
		"no key":    entity("", "aa"),
		"no hash":   entity("k", ""),
		"no kind":   {Key: "k", ContentHash: "aa", Document: &lkv1.Document{Source: lkv1.Source_SOURCE_ORCBREW}},
		"no source": {Key: "k", ContentHash: "aa", Kind: lkv1.Kind_KIND_SPELL},
	} {
		if _, err := ingest.UpsertMsg(e, "", now); !errors.Is(err, ingest.ErrInvalidEntity) {
			t.Errorf("%s: err = %v, want ErrInvalidEntity", name, err)
		}
	}
}

func TestTombstoneMsg(t *testing.T) {
	ts := &lkv1.Tombstone{Key: "orcbrew:book:spell:x", Kind: lkv1.Kind_KIND_SPELL, Source: lkv1.Source_SOURCE_ORCBREW}
	a, err := ingest.TombstoneMsg(ts, time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ingest.TombstoneMsg(ts, time.Unix(2, 0))
	if a.Subject != "lorekeeper.entity.orcbrew.spell" || a.Header.Get(ingest.HeaderOp) != "tombstone" {
		t.Errorf("subject %q op %q", a.Subject, a.Header.Get(ingest.HeaderOp))
	}
	// Delete, re-add, delete again: the second tombstone must not be
	// dropped as a duplicate of the first.
	if a.Header.Get(jetstream.MsgIDHeader) == b.Header.Get(jetstream.MsgIDHeader) {
		t.Error("two tombstones of one key at different times share a Nats-Msg-Id")
	}
	if _, err := ingest.TombstoneMsg(&lkv1.Tombstone{Key: "k"}, time.Now()); !errors.Is(err, ingest.ErrInvalidEntity) {
		t.Errorf("incomplete tombstone: err = %v, want ErrInvalidEntity", err)
	}
}

func TestEnsureResources_IdempotentAndDeduplicating(t *testing.T) {
	js := ingesttest.Connect(t, ingesttest.Server(t, nil).ClientURL())
	ctx := t.Context()
	for range 2 {
		if err := ingest.EnsureResources(ctx, js, 1); err != nil {
			t.Fatalf("EnsureResources: %v", err)
		}
	}
	if _, err := js.KeyValue(ctx, ingest.StateBucket); err != nil {
		t.Errorf("state bucket: %v", err)
	}
	if _, err := js.ObjectStore(ctx, ingest.OrcBrewBucket); err != nil {
		t.Errorf("object store: %v", err)
	}
	m, _ := ingest.UpsertMsg(entity("open5e_v2:srd-2014:spell:fireball", "aa"), "", time.Now())
	for range 3 {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := js.Stream(ctx, ingest.StreamName)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("stream holds %d messages after publishing unchanged content 3 times, want 1", info.State.Msgs)
	}
}

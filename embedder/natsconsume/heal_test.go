package natsconsume_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/natsconsume"
	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestConsumer_RecordsStreamSequence: the store's mark ends at the
// stream's last sequence, even when the last message was dead-lettered
// (no write of its own), so a node never takes that for a lost write.
func TestConsumer_RecordsStreamSequence(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:10]
	publish(t, js, es)
	if _, err := js.Publish(t.Context(), lkv1.Subject(lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Kind_KIND_SPELL), []byte("\xff not a protobuf")); err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(t.Context(), ingest.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	last := stream.CachedInfo().State.LastSeq
	st := openStore(t, t.TempDir())
	defer st.Close()
	stop := runConsumer(t, natsconsume.New(js, st, testModel(t), nil))
	waitFor(t, "the last message handled", func() bool { return st.Mark().Sequence >= last })
	stop()
	if m := st.Mark(); m.Sequence != last || m.Entities != len(es) {
		t.Errorf("mark %+v, want sequence %d and %d entities", m, last, len(es))
	}
}

// TestConsumer_Lost: Run returns ErrConsumerLost when its consumer, or
// the whole stream, is deleted under it.
func TestConsumer_Lost(t *testing.T) {
	for _, what := range []string{"consumer", "stream"} {
		t.Run(what+" deleted", func(t *testing.T) {
			_, js := startJetStream(t)
			publish(t, js, snapshotEntities(t)[:5])
			st := openStore(t, t.TempDir())
			defer st.Close()
			c := natsconsume.New(js, st, testModel(t), nil)
			cons, err := c.Ensure(t.Context(), ingest.StreamName, 1)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(t.Context(), cons) }()
			waitFor(t, "the entities stored", func() bool { return st.Stats().Entities >= 5 })
			if what == "consumer" {
				err = js.DeleteConsumer(t.Context(), ingest.StreamName, "embedder")
			} else {
				err = js.DeleteStream(t.Context(), ingest.StreamName)
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, natsconsume.ErrConsumerLost) {
					t.Errorf("Run: %v, want ErrConsumerLost", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Run did not notice in a minute")
			}
		})
	}
}

// TestConsumer_PausesWithoutRoom: while Room says the disk is full the
// consumer stores nothing and says why; once there is room it stores
// everything the stream kept meanwhile.
func TestConsumer_PausesWithoutRoom(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:20]
	publish(t, js, es)
	st := openStore(t, t.TempDir())
	defer st.Close()
	var full atomic.Bool
	full.Store(true)
	diskFull := errors.New("disk full: 1 MiB free, below the margin of 64 MiB")
	c := natsconsume.New(js, st, testModel(t), &natsconsume.Options{
		RoomEvery: 50 * time.Millisecond,
		Room:      roomUnless(&full, diskFull),
	})
	stop := runConsumer(t, c)
	defer stop()
	waitFor(t, "the consumer to pause", func() bool { return c.Paused() != nil })
	time.Sleep(500 * time.Millisecond) // ten more questions to Room
	if n := st.Stats().Entities; n != 0 {
		t.Errorf("stored %d entities while the disk was full", n)
	}
	if err := c.Paused(); !errors.Is(err, diskFull) {
		t.Errorf("Paused() = %v, want %v", err, diskFull)
	}
	full.Store(false)
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities == len(es) })
	if err := c.Paused(); err != nil {
		t.Errorf("Paused() = %v after space came back", err)
	}
}

// TestConsumer_LagReadOnceDrained: the batch that empties the stream has
// the lag read at once, so a node says it has caught up then, not at the
// next periodic read (here an hour away).
func TestConsumer_LagReadOnceDrained(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:20]
	publish(t, js, es)
	st := openStore(t, t.TempDir())
	defer st.Close()
	// Room holds the consumer back until the first read of the lag has
	// seen every message pending.
	var hold atomic.Bool
	hold.Store(true)
	c := natsconsume.New(js, st, testModel(t), &natsconsume.Options{
		Batch:     8,
		LagEvery:  time.Hour,
		RoomEvery: 10 * time.Millisecond,
		Room:      roomUnless(&hold, errors.New("held by the test")),
	})
	stop := runConsumer(t, c)
	defer stop()
	waitFor(t, "the first read of the lag", func() bool { _, known := c.Lag(); return known })
	if n, _ := c.Lag(); n != uint64(len(es)) {
		t.Fatalf("first lag %d, want %d", n, len(es))
	}
	hold.Store(false)
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities == len(es) })
	deadline := time.Now().Add(time.Minute)
	for n, _ := c.Lag(); n != 0; n, _ = c.Lag() {
		if time.Now().After(deadline) {
			t.Fatalf("lag still %d a minute after the stream was drained", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// roomUnless is an Options.Room that says err while no is set.
func roomUnless(no *atomic.Bool, err error) func() error {
	return func() error {
		if no.Load() {
			return err
		}
		return nil
	}
}

// fullDiskStore fails every write with ENOSPC while full is set, as Badger
// does when its next file finds the disk full.
type fullDiskStore struct {
	*badgerstore.Store
	full *atomic.Bool
}

func (s *fullDiskStore) Apply(ctx context.Context, ws []badgerstore.Write) error {
	if s.full.Load() {
		return fmt.Errorf("commit: while opening file: 000002.vlog: %w", syscall.ENOSPC)
	}
	return s.Store.Apply(ctx, ws)
}

// TestConsumer_WriteFindsTheDiskFull (issue 49, row 3): a batch whose write
// fails for a full disk (another writer took the space after Room was
// asked) is held and written again once there is room: the consumer says
// it is paused meanwhile, no delivery is spent (none goes to the dead
// letters however long it lasts), and every entity is stored after.
func TestConsumer_WriteFindsTheDiskFull(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:20]
	publish(t, js, es)
	st := openStore(t, t.TempDir())
	defer st.Close()
	var full atomic.Bool
	full.Store(true)
	c := natsconsume.New(js, &fullDiskStore{Store: st, full: &full}, testModel(t), &natsconsume.Options{
		RoomEvery: 20 * time.Millisecond, MaxDeliver: 2,
	})
	stop := runConsumer(t, c)
	defer stop()
	waitFor(t, "the consumer to pause", func() bool { return c.Paused() != nil })
	time.Sleep(300 * time.Millisecond) // fifteen more tries
	if err := c.Paused(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Paused() = %v, want it to say the disk is full", err)
	}
	full.Store(false)
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities == len(es) })
	if err := c.Paused(); err != nil {
		t.Errorf("Paused() = %v after space came back", err)
	}
	dlq, err := js.Stream(t.Context(), natsconsume.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := dlq.Info(t.Context()); err != nil || info.State.Msgs != 0 {
		t.Errorf("dead letters: %v (%v), want none", info.State.Msgs, err)
	}
}

// How a replica proves its store holds what the stream holds, and what it
// does when it cannot: rebuild from the stream.

package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/vectorindex"
)

// rebuild is a rebuild of the store from the stream under way.
type rebuild struct {
	reason  string
	started time.Time
}

func (r *Replica) startRebuild(reason string) {
	r.rebuild.Store(&rebuild{reason: reason, started: time.Now()})
}

// Rebuilding is why the store is being rebuilt from the stream, "" when it
// is not.
func (r *Replica) Rebuilding() string {
	if rb := r.rebuild.Load(); rb != nil {
		return rb.reason
	}
	return ""
}

// setAside moves a damaged store out of the way (to dir.damaged, replacing
// an older one), so it can be looked at but is never opened again; a store
// that cannot be moved is deleted.
func (r *Replica) setAside(cause error) error {
	aside := r.dir + ".damaged"
	_ = os.RemoveAll(aside)
	if err := os.Rename(r.dir, aside); err != nil {
		if err := os.RemoveAll(r.dir); err != nil {
			return fmt.Errorf("remove the damaged store %s: %w (delete it by hand; it is rebuilt from the stream)", r.dir, err)
		}
		aside = "(deleted)"
	}
	r.log.Error("the store is damaged: set it aside, rebuilding it from the stream", "err", cause, "set_aside", aside)
	return nil
}

// clearIndex deletes every point of idx.
func clearIndex(ctx context.Context, idx *vectorindex.Index) error {
	ids, err := idx.IDs(ctx, nil)
	if err != nil {
		return fmt.Errorf("clear the vector index: %w", err)
	}
	if err := idx.Delete(ctx, ids); err != nil {
		return fmt.Errorf("clear the vector index: %w", err)
	}
	return nil
}

// reconcile compares the store with the stream and the durable consumer,
// rebuilds the store when they disagree (emptied when it holds what the
// stream no longer does, and replayed from the stream's start by a new
// consumer), and binds the consumer. damaged is why Open set the store
// aside, if it did.
//
// The store records the stream it was written from (its creation time),
// the highest sequence it applied and its entity count (badgerstore
// StreamMark); the consumer acknowledges only what the store wrote, so an
// intact store's sequence is at least the consumer's ack floor.
func (r *Replica) reconcile(ctx context.Context, damaged error) error {
	stream, err := r.js.Stream(ctx, r.opts.Stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", r.opts.Stream, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s: %w", r.opts.Stream, err)
	}
	var ackFloor uint64
	consumerExists := true
	if c, err := stream.Consumer(ctx, r.opts.Durable); errors.Is(err, jetstream.ErrConsumerNotFound) {
		consumerExists = false
	} else if err != nil {
		return fmt.Errorf("consumer %s: %w", r.opts.Durable, err)
	} else {
		ackFloor = c.CachedInfo().AckFloor.Stream
	}
	mark := r.store.Mark()
	entities := r.store.Stats().Entities
	created := info.Created.UTC()

	var reason string
	reset := false // empty the store: it holds what the stream does not
	switch {
	case damaged != nil:
		reason = "the store was damaged: " + damaged.Error()
	case !mark.Created.IsZero() && !mark.Created.Equal(created):
		reason = fmt.Sprintf("the stream %s was made again (created %s; the store holds one created %s)",
			r.opts.Stream, created.Format(time.RFC3339), mark.Created.Format(time.RFC3339))
		reset = true
	case mark.Sequence > info.State.LastSeq:
		reason = fmt.Sprintf("the store has applied message %d, but the stream %s ends at %d", mark.Sequence, r.opts.Stream, info.State.LastSeq)
		reset = true
	case consumerExists && ackFloor > mark.Sequence && (mark.Recorded || entities == 0):
		// A store written before marks were recorded has entities and no
		// mark: it is adopted below, not rebuilt.
		reason = fmt.Sprintf("the consumer %s acknowledged the stream up to message %d, but the store holds it only up to %d (its files were lost or replaced)",
			r.opts.Durable, ackFloor, mark.Sequence)
		reset = entities > 0
	case !consumerExists && entities > 0:
		// The same stream replayed over the store ends where the stream
		// does: no need to empty it first.
		reason = fmt.Sprintf("the consumer %s is gone", r.opts.Durable)
	}
	newMark := mark
	if reason == "" {
		if !mark.Recorded || mark.Created.IsZero() {
			newMark.Created, newMark.Entities = created, entities
			if !mark.Recorded {
				newMark.Sequence = ackFloor
			}
			if err := r.store.SetMark(ctx, newMark); err != nil {
				return err
			}
		}
		if r.rebuild.Load() != nil && consumerExists {
			r.rebuild.Store(nil) // a lost consumer found again: nothing to rebuild
		}
	} else {
		r.log.Warn("rebuilding the store from the stream", "reason", reason, "stream_messages", info.State.Msgs, "stored_entities", entities)
		r.startRebuild(reason)
		if reset {
			if err := r.store.Reset(ctx, badgerstore.StreamMark{Created: created}); err != nil {
				return err
			}
		} else if err := r.store.SetMark(ctx, badgerstore.StreamMark{Created: created, Entities: entities}); err != nil {
			return err
		}
		if consumerExists {
			if err := r.js.DeleteConsumer(ctx, r.opts.Stream, r.opts.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return fmt.Errorf("delete the consumer %s to replay the stream: %w", r.opts.Durable, err)
			}
		}
	}
	r.jc, err = r.consumer.Ensure(ctx, r.opts.Stream, r.opts.Replicas)
	return err
}

// room is the consumer's Options.Room: an error while the store cannot
// keep room for its next memtable (badgerstore.KeepReserve), or while its
// filesystem has less than MinFree bytes free.
func (r *Replica) room() error {
	if err := r.store.KeepReserve(); err != nil {
		return fmt.Errorf("%w: free some space; storing resumes by itself", err)
	}
	if r.opts.MinFree == 0 {
		return nil
	}
	free := r.opts.FreeSpace
	if free == nil {
		free = badgerstore.FreeSpace
	}
	n, err := free(r.dir)
	if err != nil {
		return nil // unknown: do not stop for it
	}
	if n < r.opts.MinFree {
		return fmt.Errorf("disk full: %s free on the filesystem of %s, less than the %s kept free: free some space (or lower --min-free-space); storing resumes by itself",
			mib(n), r.dir, mib(r.opts.MinFree))
	}
	return nil
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

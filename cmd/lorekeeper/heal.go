package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
)

// streamWatch keeps what ingest publishes into while the process runs:
// every few seconds it looks at the stream and the state bucket. One found
// gone (deleted, or a NATS server that lost its store) is made again, and
// when the stream was made again (here or by another process) the Open5e
// resync runs at once; its state is checked against the stream, so it
// publishes everything again. Its readiness check fails from then until
// that resync has published into the new stream. (A node notices the loss
// from its consumer: embedder/replica.)
type streamWatch struct {
	js       jetstream.JetStream
	replicas int
	fetcher  *open5e.Fetcher
	log      *slog.Logger
	every    time.Duration

	mu      sync.Mutex
	created time.Time // the stream's creation time when last seen
	lost    string    // what was lost, and when; "" while nothing is
}

func (w *streamWatch) run(ctx context.Context) error {
	every := w.every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		w.look(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (w *streamWatch) look(ctx context.Context) {
	var gone []string
	created, err := streamCreatedAt(ctx, w.js)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		gone = append(gone, "the stream "+ingest.StreamName)
	case err != nil:
		return // NATS unreachable: the "nats" check says so
	}
	if _, err := w.js.KeyValue(ctx, ingest.StateBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		gone = append(gone, "the state bucket "+ingest.StateBucket)
	}
	if len(gone) > 0 {
		what := strings.Join(gone, " and ")
		w.log.Warn(what+" is gone (deleted, or NATS lost its store): making it again and publishing the catalogue again", "gone", what)
		w.setLost(fmt.Sprintf("%s lost at %s", what, time.Now().UTC().Format(time.RFC3339)))
		if err := ingest.EnsureResources(ctx, w.js, w.replicas); err != nil {
			w.log.Error("could not make the stream and buckets again; trying again", "err", err)
			return
		}
		if created, err = streamCreatedAt(ctx, w.js); err != nil {
			return
		}
	}
	w.mu.Lock()
	prev := w.created
	w.created = created
	w.mu.Unlock()
	remade := !prev.IsZero() && !prev.Equal(created)
	if remade && len(gone) == 0 {
		w.log.Warn("the stream was made again (by another process): publishing the catalogue again", "stream", ingest.StreamName)
		w.setLost(fmt.Sprintf("the stream %s was made again at %s", ingest.StreamName, created.Format(time.RFC3339)))
	}
	if remade || len(gone) > 0 {
		w.fetcher.Trigger()
	}
}

func (w *streamWatch) setLost(what string) {
	w.mu.Lock()
	w.lost = what
	w.mu.Unlock()
}

// check is the "stream" readiness check: not ready from a loss until the
// resync has published the catalogue into the stream made again.
func (w *streamWatch) check(ctx context.Context) error {
	w.mu.Lock()
	lost := w.lost
	w.mu.Unlock()
	if lost == "" {
		return nil
	}
	if ok, err := w.fetcher.StateMatchesStream(ctx); err == nil && ok {
		w.mu.Lock()
		if w.lost == lost {
			w.lost = ""
		}
		w.mu.Unlock()
		w.log.Info("the catalogue is published again into the stream", "after", lost)
		return nil
	}
	return fmt.Errorf("%s: publishing the catalogue again", lost)
}

// streamCreatedAt is the ENTITIES stream's creation time.
func streamCreatedAt(ctx context.Context, js jetstream.JetStream) (time.Time, error) {
	s, err := js.Stream(ctx, ingest.StreamName)
	if err != nil {
		return time.Time{}, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return info.Created.UTC(), nil
}

// The resync state is checked against the stream, not trusted alone: it
// says what was published, and a stream deleted and made again (or a NATS
// server that lost its store but not its buckets) no longer holds it.

package open5e

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
)

// StreamKey holds the creation time (RFC 3339) of the stream the
// endpoints' states were published to, written after every full run that
// had no error.
const StreamKey = "stream"

// streamCreated is the ENTITIES stream's creation time and message count.
func streamCreated(ctx context.Context, js jetstream.JetStream) (time.Time, uint64, error) {
	s, err := js.Stream(ctx, ingest.StreamName)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("stream %s: %w", ingest.StreamName, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("stream %s: %w", ingest.StreamName, err)
	}
	return info.Created.UTC(), info.State.Msgs, nil
}

// recordedStream is the creation time StreamKey holds (zero: none).
func recordedStream(ctx context.Context, kv jetstream.KeyValue) (time.Time, error) {
	e, err := kv.Get(ctx, StreamKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s of the state bucket: %w", StreamKey, err)
	}
	t, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	if err != nil {
		return time.Time{}, nil // unreadable: as if absent
	}
	return t, nil
}

// checkStream reports whether this run must publish every entity again,
// whatever the state says: the state was written for another stream, or,
// with no record of which (a state from before the record), the stream is
// empty while the state says entities were published.
func (r *run) checkStream(ctx context.Context) (republish bool, created time.Time, err error) {
	created, msgs, err := streamCreated(ctx, r.f.js)
	if err != nil {
		return false, created, err
	}
	rec, err := recordedStream(ctx, r.kv)
	if err != nil {
		return false, created, err
	}
	switch {
	case !rec.IsZero() && !rec.Equal(created):
		r.f.log.Warn("the stream was made again since the resync state was written (deleted, or NATS lost its store): publishing every entity again",
			"stream", ingest.StreamName, "created", created, "state_for", rec)
		return true, created, nil
	case rec.IsZero() && msgs == 0:
		for _, ep := range r.f.opts.Endpoints {
			st, err := r.loadState(ctx, ep)
			if err != nil {
				return false, created, err
			}
			if len(st.GetEntities()) > 0 {
				r.f.log.Warn("the stream is empty but the resync state says entities were published: publishing every entity again",
					"stream", ingest.StreamName)
				return true, created, nil
			}
		}
	}
	return false, created, nil
}

// StateMatchesStream reports whether the resync state was written for the
// stream as it is now: false from when the stream is made again until a
// full run has published everything into it.
func (f *Fetcher) StateMatchesStream(ctx context.Context) (bool, error) {
	kv, err := f.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return false, fmt.Errorf("open state bucket %s: %w", ingest.StateBucket, err)
	}
	created, _, err := streamCreated(ctx, f.js)
	if err != nil {
		return false, err
	}
	rec, err := recordedStream(ctx, kv)
	if err != nil {
		return false, err
	}
	return rec.Equal(created), nil
}

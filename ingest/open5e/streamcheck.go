// The resync state is checked against the stream, not trusted alone: it
// says what was published, and a stream deleted and made again (or a NATS
// server that lost its store but not its buckets) no longer holds it.

package open5e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
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

// streamContent reads what the stream holds of Open5e's entities: for
// each key, the content hash of its last upsert, computed from the entity
// it carries (not from the header its publisher set), or no entry when its
// last event is a tombstone. The resync compares it with the source: the
// state says what this resync published, and a message published by
// anything else is found only here.
func streamContent(ctx context.Context, js jetstream.JetStream) (map[string]string, error) {
	s, err := js.Stream(ctx, ingest.StreamName)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", ingest.StreamName, err)
	}
	out := map[string]string{}
	if s.CachedInfo().State.Msgs == 0 {
		return out, nil
	}
	var subjects []string
	for _, src := range []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1, lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Source_SOURCE_SRD_TEXT} {
		subjects = append(subjects, lkv1.SubjectPrefix+"."+src.Slug()+".>")
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: subjects})
	if err != nil {
		return nil, fmt.Errorf("read stream %s: %w", ingest.StreamName, err)
	}
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, fmt.Errorf("read stream %s: %w", ingest.StreamName, err)
		}
		n, pending := 0, uint64(0)
		for m := range batch.Messages() {
			n++
			if meta, err := m.Metadata(); err == nil {
				pending = meta.NumPending
			}
			var ev lkv1.EntityEvent
			if err := proto.Unmarshal(m.Data(), &ev); err != nil {
				continue // the node dead-letters it; nothing is served of it
			}
			switch {
			case ev.GetUpsert() != nil:
				if h, err := ingest.ContentHash(ev.GetUpsert()); err == nil {
					out[ev.GetUpsert().GetKey()] = h
				}
			case ev.GetTombstone() != nil:
				delete(out, ev.GetTombstone().GetKey())
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return nil, fmt.Errorf("read stream %s: %w", ingest.StreamName, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if n == 0 || pending == 0 {
			return out, nil
		}
	}
}

// tombstoneUnlisted tombstones the Open5e keys the stream holds that no
// endpoint lists, of the kinds the endpoints list: published by something
// else than this resync (a full run's endpoints list every entity of
// their kinds that Open5e has).
func (r *run) tombstoneUnlisted(ctx context.Context) error {
	// A fetcher given some endpoints speaks for their kinds only.
	covered := map[string]bool{}
	for k := range r.listed {
		if p, ok := lkv1.ParseEntityKey(k); ok {
			covered[lkv1.Subject(p.Source, p.Kind)] = true
		}
	}
	var gone []string
	for k := range r.held {
		p, ok := lkv1.ParseEntityKey(k)
		if ok && !r.listed[k] && covered[lkv1.Subject(p.Source, p.Kind)] {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	sort.Strings(gone)
	r.f.log.Warn("the stream holds Open5e entities that Open5e does not list (published by something else than this resync?): tombstoning them",
		"entities", len(gone), "first", gone[0])
	var errs []error
	for _, k := range gone {
		p, _ := lkv1.ParseEntityKey(k)
		m, err := ingest.TombstoneMsg(&lkv1.Tombstone{Key: k, Kind: p.Kind, Source: p.Source, Reason: "not listed by Open5e"}, time.Now())
		if err == nil {
			_, err = r.f.js.PublishMsg(ctx, m)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tombstone %s: %w", k, err))
			continue
		}
		r.sum.Unlisted++
	}
	return errors.Join(errs...)
}

package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Names of the JetStream resources ingest publishes to and keeps state in.
const (
	// StreamName is the stream of entity events (upserts and tombstones).
	StreamName = "ENTITIES"
	// StateBucket is the key-value bucket holding resync state, import
	// status and the resync lease.
	StateBucket = "LOREKEEPER_STATE"
	// OrcBrewBucket is the object-store bucket watched for .orcbrew files.
	OrcBrewBucket = "ORCBREW"
	// DuplicateWindow is how long JetStream remembers a Nats-Msg-Id: long
	// enough to absorb a retried publish or an ingest restarted mid-run.
	// Content that comes back within it (after a tombstone, or edited
	// A -> B -> A) gets a new ID all the same (UpsertMsg's generation).
	// Unchanged content outside it is caught by the resync state.
	DuplicateWindow = 10 * time.Minute
)

// StreamConfig is the ENTITIES stream: file storage, every entity subject.
// replicas is 1 on a single server, 3 on a cluster.
func StreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        StreamName,
		Description: "LoreKeeper entity upserts and tombstones",
		Subjects:    []string{lkv1.SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		// Every event is kept: a new query node replays the stream from the
		// start to build its own replica.
		Retention:  jetstream.LimitsPolicy,
		Duplicates: DuplicateWindow,
		Replicas:   max(replicas, 1),
		MaxMsgSize: 8 << 20,
	}
}

// EnsureResources creates or updates the stream, the state bucket and the
// OrcBrew bucket. It is idempotent, so every process may call it at start.
func EnsureResources(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if _, err := js.CreateOrUpdateStream(ctx, StreamConfig(replicas)); err != nil {
		return fmt.Errorf("ensure stream %s: %w", StreamName, err)
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       StateBucket,
		Description:  "LoreKeeper resync state, import status and leases",
		Storage:      jetstream.FileStorage,
		Replicas:     max(replicas, 1),
		MaxValueSize: 8 << 20,
	}); err != nil {
		return fmt.Errorf("ensure key-value bucket %s: %w", StateBucket, err)
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      OrcBrewBucket,
		Description: "OrcBrew homebrew files to import",
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	}); err != nil {
		return fmt.Errorf("ensure object store %s: %w", OrcBrewBucket, err)
	}
	return nil
}

// Header names set on every entity event.
const (
	HeaderKey  = "Lorekeeper-Key"
	HeaderHash = "Lorekeeper-Hash"
	HeaderOp   = "Lorekeeper-Op" // "upsert" or "tombstone"
)

// ErrInvalidEntity is returned for an entity that cannot be published.
var ErrInvalidEntity = errors.New("invalid entity")

// UpsertMsg builds the stream message for an upsert of e.
//
// Its Nats-Msg-Id is derived from the key, the content hash and generation,
// so that JetStream's duplicate window drops a retry of the same publish
// (a publish whose ack was lost, an ingest restarted mid-run) and nothing
// else. The content hash alone is not enough: an entity upserted,
// tombstoned and upserted again with the same content inside the window
// would get the first upsert's ID, the stream would drop it, and the entity
// would stay deleted on every node. generation is what the publisher knows
// changes after a tombstone of the key and stays the same across retries:
// the OrcBrew watcher passes the NUID of the object version it imports
// (every put of an object gets a new one, and a deleted object comes back
// only by a new put); the Open5e fetcher passes how many times the
// entity's content changed or it was tombstoned, counted in its resync
// state as each is published ("" for an entity published once), so that
// an entity restored, or edited back (A -> B -> A), gets a new ID and a
// failed publish retried the same. Tombstones need no generation: their
// ID includes the time (TombstoneMsg).
func UpsertMsg(e *lkv1.Entity, generation string, now time.Time) (*nats.Msg, error) {
	if e.GetKey() == "" || e.GetKind() == lkv1.Kind_KIND_UNSPECIFIED || e.GetDocument().GetSource() == lkv1.Source_SOURCE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: %q needs a key, a kind and a source", ErrInvalidEntity, e.GetKey())
	}
	if e.GetContentHash() == "" {
		return nil, fmt.Errorf("%w: %q has no content hash", ErrInvalidEntity, e.GetKey())
	}
	data, err := proto.Marshal(&lkv1.EntityEvent{
		Event:       &lkv1.EntityEvent_Upsert{Upsert: e},
		PublishedAt: timestamppb.New(now),
	})
	if err != nil {
		return nil, fmt.Errorf("marshal upsert %q: %w", e.GetKey(), err)
	}
	m := nats.NewMsg(lkv1.Subject(e.GetDocument().GetSource(), e.GetKind()))
	m.Data = data
	m.Header.Set(jetstream.MsgIDHeader, msgID(e.GetKey(), e.GetContentHash(), generation))
	m.Header.Set(HeaderKey, e.GetKey())
	m.Header.Set(HeaderHash, e.GetContentHash())
	m.Header.Set(HeaderOp, "upsert")
	return m, nil
}

// TombstoneMsg builds the stream message saying the entity t.Key is gone.
func TombstoneMsg(t *lkv1.Tombstone, now time.Time) (*nats.Msg, error) {
	if t.GetKey() == "" || t.GetKind() == lkv1.Kind_KIND_UNSPECIFIED || t.GetSource() == lkv1.Source_SOURCE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: tombstone %q needs a key, a kind and a source", ErrInvalidEntity, t.GetKey())
	}
	data, err := proto.Marshal(&lkv1.EntityEvent{
		Event:       &lkv1.EntityEvent_Tombstone{Tombstone: t},
		PublishedAt: timestamppb.New(now),
	})
	if err != nil {
		return nil, fmt.Errorf("marshal tombstone %q: %w", t.GetKey(), err)
	}
	m := nats.NewMsg(lkv1.Subject(t.GetSource(), t.GetKind()))
	m.Data = data
	// A tombstone's ID includes the time: deleting, re-adding and deleting
	// again inside the duplicate window must publish the second tombstone.
	m.Header.Set(jetstream.MsgIDHeader, msgID(t.GetKey(), fmt.Sprintf("tombstone-%d", now.UnixNano()), ""))
	m.Header.Set(HeaderKey, t.GetKey())
	m.Header.Set(HeaderOp, "tombstone")
	return m, nil
}

// msgID hashes key, hash and generation; an empty generation leaves the ID
// what it was before generations existed.
func msgID(key, hash, generation string) string {
	s := key + "\x00" + hash
	if generation != "" {
		s += "\x00" + generation
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// ContentHash is the hex SHA-256 of e's deterministic protobuf encoding
// with fetched_at and content_hash cleared: equal hashes mean nothing a user
// can see has changed. Every source hashes this way, so the resync state and
// the embedding cache compare like with like.
func ContentHash(e *lkv1.Entity) (string, error) {
	c := proto.Clone(e).(*lkv1.Entity)
	c.FetchedAt = nil
	c.ContentHash = ""
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("hash %q: %w", e.GetKey(), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

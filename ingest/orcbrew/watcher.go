package orcbrew

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/edn"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Options tune the Watcher. A nil *Options means all defaults.
type Options struct {
	Logger  *slog.Logger
	Metrics *Metrics
	// MaxSize is the largest object imported, in bytes (default
	// Parse.MaxSize if set, else DefaultMaxSize); a larger one fails
	// without being read.
	MaxSize int64
	// Parse sets the parser's limits (default: edn's defaults).
	Parse *edn.Options
	// RetryDelay is the first wait before retrying an import that failed
	// for a reason other than the file, doubled on each of up to 5 tries
	// (default 1s).
	RetryDelay time.Duration
	// OnImport, if set, is told each import's outcome once its status is
	// saved (OK, PARTIAL or FAILED): how a process tells its own clients
	// that a file could not be read.
	OnImport func(*lkv1.ImportState)
}

// Watcher imports the objects of the ORCBREW bucket: a new or changed
// object is decoded and its entities upserted (those it no longer holds are
// tombstoned), a deleted object has all its entities tombstoned. What it
// did is kept per object in the state bucket (see StateKey), which also
// makes it restartable: an object whose digest is recorded is not redone.
type Watcher struct {
	js       jetstream.JetStream
	log      *slog.Logger
	metrics  *Metrics
	parse    edn.Options
	retry    time.Duration
	onImport func(*lkv1.ImportState)
}

// NewWatcher returns a watcher of the ORCBREW bucket that publishes with
// js. The stream and buckets must exist (ingest.EnsureResources).
func NewWatcher(js jetstream.JetStream, opts *Options) *Watcher {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = time.Second
	}
	w := &Watcher{js: js, log: o.Logger, metrics: o.Metrics, retry: o.RetryDelay, onImport: o.OnImport}
	if o.Parse != nil {
		w.parse = *o.Parse
	}
	switch {
	case o.MaxSize > 0:
		w.parse.MaxSize = o.MaxSize
	case w.parse.MaxSize <= 0:
		w.parse.MaxSize = DefaultMaxSize
	}
	return w
}

// Run watches the bucket until ctx ends, then returns nil. It first goes
// through every object in the bucket (and the status of objects that are
// no longer there), then follows changes.
func (w *Watcher) Run(ctx context.Context) error {
	obs, err := w.js.ObjectStore(ctx, ingest.OrcBrewBucket)
	if err != nil {
		return fmt.Errorf("open object store %s: %w", ingest.OrcBrewBucket, err)
	}
	kv, err := w.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return fmt.Errorf("open key-value bucket %s: %w", ingest.StateBucket, err)
	}
	watch, err := obs.Watch(ctx)
	if err != nil {
		return fmt.Errorf("watch object store %s: %w", ingest.OrcBrewBucket, err)
	}
	defer watch.Stop()

	seen := map[string]bool{} // objects of the initial listing
	initial := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case info, ok := <-watch.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("watch object store %s: closed", ingest.OrcBrewBucket)
			}
			if info == nil {
				if initial {
					initial = false
					w.forgetMissing(ctx, obs, kv, seen)
				}
				continue
			}
			if initial {
				seen[info.Name] = true
			}
			w.handle(ctx, obs, kv, info)
		}
	}
}

// forgetMissing treats objects that have a status but are not in the
// bucket at all (not even as a deletion marker) as deleted.
func (w *Watcher) forgetMissing(ctx context.Context, obs jetstream.ObjectStore, kv jetstream.KeyValue, seen map[string]bool) {
	states, err := statuses(ctx, kv)
	if err != nil {
		w.log.Error("orcbrew: list import states", "err", err)
		return
	}
	for _, s := range states {
		if !seen[s.GetObject()] {
			w.handle(ctx, obs, kv, &jetstream.ObjectInfo{ObjectMeta: jetstream.ObjectMeta{Name: s.GetObject()}, Deleted: true})
		}
	}
}

// handle processes one watch update, retrying what failed for reasons
// other than the file.
func (w *Watcher) handle(ctx context.Context, obs jetstream.ObjectStore, kv jetstream.KeyValue, info *jetstream.ObjectInfo) {
	delay := w.retry
	for attempt := 1; ; attempt++ {
		err := w.sync(ctx, obs, kv, info)
		if err == nil || ctx.Err() != nil {
			return
		}
		w.metrics.outcome(OutcomeError)
		if attempt == 5 {
			w.log.Error("orcbrew: giving up on object until it changes or ingest restarts", "object", info.Name, "err", err)
			return
		}
		w.log.Warn("orcbrew: import interrupted, retrying", "object", info.Name, "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// sync does the work for one object. It returns an error only for what a
// retry may fix; a bad file ends in a FAILED status and a nil error.
func (w *Watcher) sync(ctx context.Context, obs jetstream.ObjectStore, kv jetstream.KeyValue, info *jetstream.ObjectInfo) error {
	name := info.Name
	prev, err := loadState(ctx, kv, StateKey(name))
	if err != nil {
		return err
	}
	if info.Deleted {
		return w.remove(ctx, kv, name, prev)
	}
	if prev != nil && prev.GetDigest() == info.Digest && prev.GetDecoder() == DecoderVersion {
		return nil // this version is done (or failed, and will fail again)
	}
	now := time.Now()
	st := &lkv1.ImportState{Object: name, Digest: info.Digest, ImportedAt: timestamppb.New(now), Decoder: DecoderVersion}
	var data []byte
	if limit := w.parse.MaxSize; info.Size > uint64(limit) {
		err = fmt.Errorf("%w: object is %d bytes, over the limit of %d", edn.ErrTooLarge, info.Size, limit)
	} else {
		data, err = readObject(ctx, obs, name, info.Size, limit)
		switch {
		case errors.Is(err, ErrTooLarge):
			// It grew since info: the status says so, like any bad file.
		case errors.Is(err, jetstream.ErrObjectNotFound):
			return nil // deleted meanwhile: its deletion comes next
		case err != nil:
			return fmt.Errorf("read object %s: %w", name, err)
		}
		if err == nil {
			// What was read may be newer than info: record its own digest.
			st.Digest = Digest(data)
			if prev != nil && prev.GetDigest() == st.Digest && prev.GetDecoder() == DecoderVersion {
				return nil
			}
		}
	}
	var f *File
	if err == nil {
		f, err = Decode(name, data, &DecodeOptions{Parse: &w.parse, FetchedAt: now})
	}
	if err != nil {
		// The previous good version's entities stay, and so does the
		// record of them, so that a later delete still removes them.
		st.Status = lkv1.ImportState_STATUS_FAILED
		st.Error = err.Error()
		st.EntityKeys = prev.GetEntityKeys()
		if err := saveState(ctx, kv, st); err != nil {
			return err
		}
		w.metrics.outcome(OutcomeFailed)
		w.log.Warn("orcbrew: import failed; previous entities kept", "object", name, "err", err, "kept", len(st.EntityKeys))
		w.tell(st)
		return nil
	}
	st.Books, st.Counts, st.Warnings = f.Books, maps.Clone(f.Counts), f.Warnings
	st.Status = lkv1.ImportState_STATUS_OK
	if len(f.Warnings) > 0 {
		st.Status = lkv1.ImportState_STATUS_PARTIAL
	}
	owners, err := w.owners(ctx, kv, name)
	if err != nil {
		return err
	}
	// Build every message first: an entity too large for the server is
	// skipped and reported, like any other unusable entity.
	maxPayload := w.js.Conn().MaxPayload()
	keep := make(map[string]bool, len(f.Entities))
	var msgs []*nats.Msg
	for _, e := range f.Entities {
		// The version's NUID as generation: a retry of this import is a
		// duplicate, a new put of the object (after a delete too) is not.
		msg, err := ingest.UpsertMsg(e, info.NUID, now)
		if err != nil {
			return err
		}
		if size := int64(len(msg.Data)) + 1024; maxPayload > 0 && size > maxPayload {
			st.Warnings = append(st.Warnings, fmt.Sprintf("skipped %s: %d bytes, over the server's message limit of %d", e.GetKey(), size, maxPayload))
			st.Counts[e.GetKind().Slug()]--
			st.Status = lkv1.ImportState_STATUS_PARTIAL
			continue
		}
		keep[e.GetKey()] = true
		st.EntityKeys = append(st.EntityKeys, e.GetKey())
		if o, ok := owners[e.GetKey()]; ok {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s is also imported from %s; this version replaces that one", e.GetKey(), o))
		}
		msgs = append(msgs, msg)
	}
	for k, n := range st.Counts {
		if n == 0 {
			delete(st.Counts, k)
		}
	}
	// Every upsert is acked before the status says it is there.
	for _, err := range ingest.PublishAll(ctx, w.js, msgs, nil) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
	}
	var gone []string
	for _, k := range prev.GetEntityKeys() {
		if !keep[k] {
			gone = append(gone, k)
		}
	}
	if err := w.tombstone(ctx, gone, owners, "no longer in object "+name, now); err != nil {
		return err
	}
	st.Warnings = capWarnings(st.Warnings, maxWarnings)
	if err := saveState(ctx, kv, st); err != nil {
		return err
	}
	w.metrics.outcome(map[lkv1.ImportState_Status]string{
		lkv1.ImportState_STATUS_OK: OutcomeOK, lkv1.ImportState_STATUS_PARTIAL: OutcomePartial,
	}[st.Status])
	w.metrics.entitiesPublished(st.Counts)
	w.log.Info("orcbrew: imported", "object", name, "status", st.Status.String(), "entities", len(f.Entities),
		"tombstoned", len(gone), "warnings", len(st.Warnings), "books", f.Books)
	w.tell(st)
	return nil
}

func (w *Watcher) tell(st *lkv1.ImportState) {
	if w.onImport != nil {
		w.onImport(st)
	}
}

// remove tombstones everything the deleted object brought and forgets it.
func (w *Watcher) remove(ctx context.Context, kv jetstream.KeyValue, name string, prev *lkv1.ImportState) error {
	if prev == nil {
		return nil
	}
	owners, err := w.owners(ctx, kv, name)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := w.tombstone(ctx, prev.GetEntityKeys(), owners, "object deleted: "+name, now); err != nil {
		return err
	}
	if err := kv.Delete(ctx, StateKey(name)); err != nil {
		return fmt.Errorf("delete import state of %s: %w", name, err)
	}
	w.metrics.outcome(OutcomeDeleted)
	w.log.Info("orcbrew: object deleted", "object", name, "tombstoned", len(prev.GetEntityKeys()))
	return nil
}

// tombstone publishes tombstones for keys, except those another object
// still brings.
func (w *Watcher) tombstone(ctx context.Context, keys []string, owners map[string]string, reason string, now time.Time) error {
	for _, k := range keys {
		if _, ok := owners[k]; ok {
			continue
		}
		p, ok := lkv1.ParseEntityKey(k)
		if !ok || p.Source != lkv1.Source_SOURCE_ORCBREW {
			w.log.Warn("orcbrew: not an orcbrew entity key; no tombstone", "key", k)
			continue
		}
		msg, err := ingest.TombstoneMsg(&lkv1.Tombstone{Key: k, Kind: p.Kind, Source: lkv1.Source_SOURCE_ORCBREW, Reason: reason}, now)
		if err != nil {
			return err
		}
		if _, err := w.js.PublishMsg(ctx, msg); err != nil {
			return fmt.Errorf("publish tombstone %s: %w", k, err)
		}
	}
	return nil
}

// owners maps the entity keys that objects other than name hold to one of
// those objects.
func (w *Watcher) owners(ctx context.Context, kv jetstream.KeyValue, name string) (map[string]string, error) {
	states, err := statuses(ctx, kv)
	if err != nil {
		return nil, err
	}
	sort.Slice(states, func(i, j int) bool { return states[i].GetObject() < states[j].GetObject() })
	out := map[string]string{}
	for _, s := range states {
		if s.GetObject() == name {
			continue
		}
		for _, k := range s.GetEntityKeys() {
			if _, ok := out[k]; !ok {
				out[k] = s.GetObject()
			}
		}
	}
	return out, nil
}

// maxWarnings bounds the warnings kept in a status, which must fit in a KV
// value however many entities a file gets wrong.
const maxWarnings = 100

func capWarnings(ws []string, n int) []string {
	if len(ws) <= n {
		return ws
	}
	return append(ws[:n:n], fmt.Sprintf("... and %d more warnings", len(ws)-n))
}

// readObject reads an object into one buffer of its size: the parser
// takes the bytes whole, so this is the only copy (a growing buffer would
// hold up to two). More than max bytes is ErrTooLarge.
func readObject(ctx context.Context, obs jetstream.ObjectStore, name string, size uint64, limit int64) ([]byte, error) {
	r, err := obs.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(int64(size), limit)+1))
	if _, err := buf.ReadFrom(&limitReader{r: r, name: name, max: limit}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

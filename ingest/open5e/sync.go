// One resync: the lease held for its length, each endpoint fetched,
// compared with its state, published and tombstoned.

package open5e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srd52"
	"lorekeeper.dev/ingest/srddb"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Sync runs one resync now. It returns ErrLeaseHeld, and does nothing,
// when another run holds the lease. Otherwise it returns what it did, and
// an error joining every endpoint's failure: endpoints that failed keep
// what they had and publish no tombstones.
func (f *Fetcher) Sync(ctx context.Context) (Summary, error) {
	return f.sync(ctx, f.opts.Endpoints)
}

// sync runs one resync of eps.
func (f *Fetcher) sync(ctx context.Context, eps []Endpoint) (sum Summary, err error) {
	sum.Started = time.Now()
	if !f.running.TryLock() {
		return sum, ErrLeaseHeld
	}
	defer f.running.Unlock()
	defer func() {
		sum.Duration = time.Since(sum.Started)
		f.opts.Metrics.observeDuration(sum.Duration.Seconds())
	}()

	kv, err := f.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return sum, fmt.Errorf("open state bucket %s: %w", ingest.StateBucket, err)
	}
	var l *lease
	l, err = acquire(ctx, kv, leaseOwner{holder: f.opts.Holder, node: f.opts.Node, nc: f.js.Conn()}, f.opts.LeaseTTL)
	if err != nil {
		return sum, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := l.release(rctx); err != nil {
			f.log.Warn("open5e resync", "err", err)
		}
	}()

	// Keep the lease while the run lasts; losing it (a takeover after we
	// stalled past its TTL) stops the run.
	runCtx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(f.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				if err := l.renew(runCtx); err != nil && runCtx.Err() == nil {
					cancel(err)
					return
				}
			}
		}
	}()
	r := &run{f: f, kv: kv, sum: &sum, eps: eps}
	err = r.do(runCtx)
	cancel(nil)
	<-renewed
	if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
		err = errors.Join(err, cause)
	}
	if ctx.Err() == nil && len(eps) == len(f.opts.Endpoints) {
		// Only a full run resets the schedule.
		_, perr := kv.Put(context.WithoutCancel(ctx), LastRunKey, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		_, nerr := kv.Put(context.WithoutCancel(ctx), NormalizerKey, []byte(strconv.Itoa(NormalizerVersion)))
		err = errors.Join(err, perr, nerr)
	}
	return sum, err
}

type run struct {
	f   *Fetcher
	kv  jetstream.KeyValue
	sum *Summary
	eps []Endpoint
	// v1: the endpoints read early for a supplement (v1 endpoints, v2
	// items), read once per run.
	v1 map[Endpoint]EndpointResult
	// republish: the state is not of this stream (checkStream), so every
	// entity is published as new.
	republish bool
	// held is what the stream holds of Open5e's entities (streamContent);
	// nil when it could not be read, and the state is trusted.
	held map[string]string
	// listed are the keys the endpoints of this run list.
	listed map[string]bool
	// srd: the SRD 5.1 transcription, read at the first endpoint that
	// needs it.
	srd *srddb.DB
	// text is Options.Text read for this run (openText), or why it could
	// not be read; textRead tells whether it was tried.
	text     *srd52.Book
	textErr  error
	textRead bool
}

func (r *run) do(ctx context.Context) error {
	f := r.f
	eps := r.eps
	now := time.Now()

	republish, created, err := r.checkStream(ctx)
	if err != nil {
		// The endpoints fail on publishing if NATS is the trouble; the
		// next run checks again.
		f.log.Warn("could not check the resync state against the stream", "err", err)
		created = time.Time{}
	}
	r.republish = republish
	if !republish {
		// The state says what was published; the stream says what is
		// there, which is what the nodes serve.
		if r.held, err = streamContent(ctx, f.js); err != nil {
			f.log.Warn("could not read what the stream holds; trusting the resync state", "err", err)
			r.held = nil
		}
	}
	r.listed = map[string]bool{}
	skipped := false

	cat, catErr := FetchCatalog(ctx, f.client)
	if ctx.Err() != nil {
		return ctx.Err()
	}

	var errs []error
	// v2 coverage for the v1 fill-ins: what v2 lists now, plus what the
	// state says it listed before, for v2 endpoints that failed this time.
	var v2Keys []string
	inRun := map[Endpoint]bool{}
	for _, ep := range eps {
		inRun[ep] = true
	}
	for _, ep := range V2Endpoints {
		if inRun[ep] {
			continue
		}
		// Not synced in this run: what it listed last time still counts.
		if st, err := r.loadState(ctx, ep); err == nil {
			for k := range st.GetEntities() {
				v2Keys = append(v2Keys, k)
			}
		}
	}
	for i, ep := range eps {
		st, err := r.loadState(ctx, ep)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if r.republish {
			st.Entities = nil
		}
		es := EndpointSummary{Endpoint: ep.Path()}
		switch {
		case catErr != nil:
			es.Err = catErr
			es.Errors = 1
			r.failed(ctx, st, now, catErr, true)
		case st.GetBackoffUntil() != nil && now.Before(st.GetBackoffUntil().AsTime()):
			es.Skipped, skipped = true, true
			es.Err = fmt.Errorf("backing off until %s after: %s", st.GetBackoffUntil().AsTime().Format(time.RFC3339), st.GetLastError())
		case ep == TextEndpoint:
			r.syncText(ctx, ep, cat, st, v2Keys, &es)
		default:
			r.syncEndpoint(ctx, ep, i, len(eps), cat, st, v2Keys, &es)
		}
		if ep.Version == "v2" {
			for k := range st.GetEntities() {
				v2Keys = append(v2Keys, k)
			}
		}
		// A run stopped during the endpoint (the process shutting down)
		// keeps what it published, and the endpoint counts as not tried:
		// the next start syncs it at once, and readiness waits for it.
		interrupted := ctx.Err() != nil
		if !es.Skipped {
			if !interrupted {
				st.LastAttempt = timestamppb.New(now)
			}
			st.LastCounts = &lkv1.SyncCounts{
				Fetched: uint64(es.Fetched), Created: uint64(es.New), Changed: uint64(es.Changed),
				Removed: uint64(es.Removed), Unchanged: uint64(es.Unchanged), Errors: uint64(es.Errors),
				Pages: uint64(es.Pages),
			}
			if err := r.saveState(context.WithoutCancel(ctx), ep, st); err != nil {
				es.StreamFailed = es.Err == nil || es.StreamFailed
				es.Err = errors.Join(es.Err, err)
				es.Errors++
			}
		}
		if es.Err != nil && !es.Skipped {
			errs = append(errs, fmt.Errorf("%s: %w", ep.Path(), es.Err))
		}
		f.log.Info("open5e resync " + es.String())
		r.sum.Endpoints = append(r.sum.Endpoints, es)
		if f.opts.Progress != nil {
			f.opts.Progress(Progress{Endpoint: ep.Path(), Index: i + 1, Endpoints: len(eps), Page: es.Pages, Done: es.Fetched, Total: es.Fetched, Finished: true, Summary: &es})
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if len(errs) == 0 && !skipped && len(eps) == len(f.opts.Endpoints) && r.held != nil {
		if err := r.tombstoneUnlisted(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && !skipped && !created.IsZero() && len(eps) == len(f.opts.Endpoints) {
		// Every endpoint's state now describes this stream.
		if _, err := r.kv.Put(context.WithoutCancel(ctx), StreamKey, []byte(created.Format(time.RFC3339Nano))); err != nil {
			errs = append(errs, fmt.Errorf("record the stream of the resync state: %w", err))
		}
	}
	return errors.Join(errs...)
}

// fetchV1 returns the v1 endpoint's records, read once per run: the v1
// endpoint's own sync later uses the same result when it succeeded.
func (r *run) fetchV1(ctx context.Context, ep Endpoint, cat *Catalog) ([]*lkv1.Entity, error) {
	if res, ok := r.v1[ep]; ok {
		return res.Entities, nil
	}
	res := FetchEndpoint(ctx, r.f.client, ep, cat, nil)
	if res.Err != nil {
		return nil, res.Err
	}
	if r.v1 == nil {
		r.v1 = map[Endpoint]EndpointResult{}
	}
	r.v1[ep] = res
	return res.Entities, nil
}

// crossCheck runs the SRD 5.1 cross-check on the entities es of ep, the
// transcription read once a run, with the records of the v1 endpoint of
// the kind (SRDOtherSource).
func (r *run) crossCheck(ctx context.Context, ep Endpoint, es []*lkv1.Entity, cat *Catalog) error {
	if r.srd == nil {
		db, err := srddb.Load()
		if err != nil {
			return err
		}
		r.srd = db
	}
	var v1 []*lkv1.Entity
	if other, ok := SRDOtherSource(ep); ok {
		var err error
		if v1, err = r.fetchV1(ctx, other, cat); err != nil {
			return fmt.Errorf("the records of %s: %w", other.Path(), err)
		}
	}
	return crossCheckSRD(r.srd, es, v1)
}

// failed records an endpoint failure in its state; backoff leaves the
// endpoint alone for EndpointBackoff. A run stopped meanwhile (ctx done:
// the process is shutting down) is no failure of the endpoint: nothing is
// recorded, so the next start does not wait out a backoff with the
// endpoint missing from the catalogue.
func (r *run) failed(ctx context.Context, st *lkv1.EndpointState, now time.Time, err error, backoff bool) {
	if ctx.Err() != nil {
		return
	}
	st.LastError = err.Error()
	if backoff {
		st.BackoffUntil = timestamppb.New(now.Add(r.f.opts.EndpointBackoff))
	}
}

func (r *run) syncEndpoint(ctx context.Context, ep Endpoint, i, n int, cat *Catalog, st *lkv1.EndpointState, v2Keys []string, es *EndpointSummary) {
	f := r.f
	var res EndpointResult
	if got, ok := r.v1[ep]; ok {
		res = got
	} else {
		res = FetchEndpoint(ctx, f.client, ep, cat, func(p Page) {
			if f.opts.Progress != nil {
				f.opts.Progress(Progress{Endpoint: ep.Path(), Index: i + 1, Endpoints: n, Page: p.Number, Done: p.Records, Total: p.Count})
			}
		})
	}
	entities := res.Entities
	if sup, ok := supplementOf(ep); ok {
		// Without the v1 records the entities would lose what they add:
		// publish nothing and fail the endpoint, which keeps what is stored.
		// So too when the endpoint itself failed part-way: the pages read
		// are not completed (supplements run on whole endpoints), and
		// published they would replace stored entities with poorer ones
		// (spells without the classes, creatures without the subtypes).
		var err error
		if res.Complete() {
			var v1 []*lkv1.Entity
			if v1, err = r.fetchV1(ctx, sup.v1, cat); err == nil {
				err = sup.apply(entities, v1, cat)
			}
			if err != nil {
				res.Err = fmt.Errorf("the records of %s that complete it: %w", sup.v1.Path(), err)
			}
		}
		if err != nil || !res.Complete() {
			entities = nil
		}
	}
	if ep.Version == "v1" {
		var err error
		if entities, err = FilterV1(entities, CoverageFromKeys(v2Keys), cat); err != nil {
			res.Err = errors.Join(res.Err, err)
			entities = nil
		}
	}
	if ep.Version == "v2" && ep.Name == "items" {
		// The weapon and armor entities carry them (twins.go).
		entities = withoutItemTwins(entities)
	}
	if _, ok := srdChecked[ep.Name]; ok && ep.Version == "v2" && len(entities) > 0 {
		// SRD 5.1 against its second transcription, with Open5e's v1
		// records of it as the other source: without them, publish
		// nothing, as for a supplement.
		if err := r.crossCheck(ctx, ep, entities, cat); err != nil {
			res.Err = errors.Join(res.Err, fmt.Errorf("the SRD 5.1 cross-check: %w", err))
			entities = nil
		}
	}
	if ep.Version == "v2" {
		if err := r.completeFromText(ctx, entities, v2Keys); err != nil {
			res.Err = errors.Join(res.Err, err)
		}
	}
	r.publishEndpoint(ctx, ep, res, entities, st, es)
}

// publishEndpoint publishes what an endpoint's fetch changed: upserts of
// its new and changed entities, and, once the fetch is complete,
// tombstones of what the state has that it no longer lists; then it
// records the outcome in st and es.
func (r *run) publishEndpoint(ctx context.Context, ep Endpoint, res EndpointResult, entities []*lkv1.Entity, st *lkv1.EndpointState, es *EndpointSummary) {
	f := r.f
	now := time.Now()
	es.Fetched = res.Records
	es.Pages = res.Pages
	es.Errors = len(res.Invalid)
	if res.Err != nil {
		es.Errors++
	}
	for _, err := range res.Invalid {
		f.log.Warn("open5e record skipped", "err", err)
	}

	if st.Entities == nil {
		st.Entities = map[string]string{}
	}
	listed := make(map[string]bool, len(entities))
	var toPublish []*lkv1.Entity
	repair := map[string]bool{}
	for _, e := range entities {
		listed[e.Key] = true
		r.listed[e.Key] = true
		old, had := st.Entities[e.Key]
		if had && old == e.ContentHash {
			if r.held == nil || r.held[e.Key] == e.ContentHash {
				es.Unchanged++
				continue
			}
			// Published, but the stream holds something else (or
			// nothing) under the key now.
			repair[e.Key] = true
		}
		toPublish = append(toPublish, e)
	}
	if len(repair) > 0 {
		es.Repaired = len(repair)
		f.log.Warn("the stream holds other content than Open5e's for some entities (published by something else than this resync?): publishing Open5e's again",
			"endpoint", ep.Path(), "entities", len(repair))
	}
	srdFirst(toPublish)
	var pubErr error
	errs := r.publishAll(ctx, toPublish, st)
	for i, e := range toPublish {
		if errs[i] != nil {
			es.Errors++
			f.opts.Metrics.publishedAdd(e.Kind.Slug(), e.Document.GetKey(), "failed")
			pubErr = errors.Join(pubErr, errs[i])
			continue
		}
		outcome := "created"
		if _, had := st.Entities[e.Key]; had {
			es.Changed++
			outcome = "changed"
		} else {
			es.New++
		}
		if _, had := st.GetGenerations()[e.Key]; had || outcome == "changed" {
			bumpGeneration(st, e.Key)
		}
		st.Entities[e.Key] = e.ContentHash
		f.opts.Metrics.publishedAdd(e.Kind.Slug(), e.Document.GetKey(), outcome)
	}

	switch {
	case res.Err != nil:
		es.Err = errors.Join(res.Err, pubErr)
		r.failed(ctx, st, now, es.Err, true)
		return
	case pubErr != nil:
		es.Err, es.StreamFailed = pubErr, true
		r.failed(ctx, st, now, pubErr, false)
		return
	case len(res.Invalid) > 0:
		// A record we could not read may be one we have: keep everything.
		es.Err = fmt.Errorf("%d invalid records: %w", len(res.Invalid), errors.Join(res.Invalid...))
		r.failed(ctx, st, now, es.Err, false)
		return
	}

	// Complete: whatever the state has that the API no longer lists is gone.
	var gone []string
	for k := range st.Entities {
		if !listed[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		if err := r.tombstone(ctx, ep, k); err != nil {
			es.Errors++
			pubErr = errors.Join(pubErr, err)
			continue
		}
		delete(st.Entities, k)
		delete(r.held, k) // the stream no longer holds it: not unlisted
		bumpGeneration(st, k)
		es.Removed++
	}
	if pubErr != nil {
		es.Err, es.StreamFailed = pubErr, true
		r.failed(ctx, st, now, pubErr, false)
		return
	}
	st.Digest = digest(st.Entities)
	st.LastSuccess = timestamppb.New(now)
	st.LastError = ""
	st.BackoffUntil = nil
	f.opts.Metrics.succeeded(ep.Path(), float64(now.UnixNano())/1e9)
}

// publishAll publishes upserts of es through one publish window and
// returns each one's error (nil when the stream acked it). An entity that
// was published before (changed, or restored after a tombstone) gets the
// next of its generations in st as its upsert's generation
// (ingest.UpsertMsg), so that content coming back within the duplicate
// window is not dropped as a duplicate of its earlier upsert; a retry
// finds the same count and is. The messages are built a window at a
// time: the whole of v2/creatures built at once (each message carries its
// source record) was a 70 MB spike in a first load's heap.
func (r *run) publishAll(ctx context.Context, es []*lkv1.Entity, st *lkv1.EndpointState) []error {
	errs := make([]error, len(es))
	now := time.Now()
	for lo := 0; lo < len(es); lo += publishWindow {
		part := es[lo:min(lo+publishWindow, len(es))]
		msgs := make([]*nats.Msg, 0, len(part))
		built := make([]int, 0, len(part)) // msgs[j] is the upsert of es[built[j]]
		for i, e := range part {
			var gen string
			n, had := st.GetGenerations()[e.Key]
			if _, changed := st.GetEntities()[e.Key]; had || changed {
				gen = strconv.FormatUint(n+1, 10)
			}
			m, err := ingest.UpsertMsg(e, gen, now)
			if err != nil {
				errs[lo+i] = err
				continue
			}
			msgs = append(msgs, m)
			built = append(built, lo+i)
		}
		for j, err := range ingest.PublishAll(ctx, r.f.js, msgs, &ingest.WindowOptions{Window: publishWindow}) {
			errs[built[j]] = err
		}
	}
	return errs
}

// srdFirst puts the SRDs' entities before the other books' (in their
// order otherwise): a node stores the stream in order, so while a first
// load goes on, a name answers with the SRD's copy first, as it will once
// the load is done, not with whichever book's sorts first ("a5e-ag"'s
// Fireball came eight seconds before SRD 5.1's).
func srdFirst(es []*lkv1.Entity) {
	rank := func(e *lkv1.Entity) int {
		switch e.GetDocument().GetKey() {
		case "srd-2014", "srd-2024":
			return 0
		}
		return 1
	}
	slices.SortStableFunc(es, func(a, b *lkv1.Entity) int { return rank(a) - rank(b) })
}

// publishWindow is how many upserts are built and in flight at once
// (ingest.PublishAll's default window).
const publishWindow = 256

// bumpGeneration counts a published change or tombstone of key.
func bumpGeneration(st *lkv1.EndpointState, key string) {
	if st.Generations == nil {
		st.Generations = map[string]uint64{}
	}
	st.Generations[key]++
}

func (r *run) tombstone(ctx context.Context, ep Endpoint, key string) error {
	kind, src := ep.Kind, ep.Source()
	if p, ok := lkv1.ParseEntityKey(key); ok {
		kind, src = p.Kind, p.Source
	}
	m, err := ingest.TombstoneMsg(&lkv1.Tombstone{
		Key: key, Kind: kind, Source: src, Reason: "removed from " + ep.Path(),
	}, time.Now())
	if err != nil {
		return err
	}
	if _, err := r.f.js.PublishMsg(ctx, m); err != nil {
		r.f.opts.Metrics.publishedAdd(kind.Slug(), docOf(key), "failed")
		return fmt.Errorf("publish tombstone %s: %w", key, err)
	}
	r.f.opts.Metrics.publishedAdd(kind.Slug(), docOf(key), "removed")
	return nil
}

func docOf(key string) string {
	p, _ := lkv1.ParseEntityKey(key)
	return p.Document
}

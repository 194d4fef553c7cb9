// The Fetcher keeps LoreKeeper's copy of Open5e complete and current: on
// a schedule or on demand it reads every endpoint, publishes
// upserts for new and changed entities and, after a complete fetch,
// tombstones for entities no longer listed, with its state in the
// LOREKEEPER_STATE key-value bucket so that any ingest process can resume.

package open5e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// LiveURL is the public Open5e API, the default base URL.
const LiveURL = CanonicalOrigin

// LastRunKey holds the finish time of the last resync (RFC 3339), which
// Run's schedule starts from.
const LastRunKey = "last-run"

// StatePrefix starts the state bucket key of every endpoint's resync state.
const StatePrefix = "sync."

// StateKey is the state bucket key of an endpoint: "sync.v2.spells".
func StateKey(ep Endpoint) string { return StatePrefix + ep.Version + "." + ep.Name }

// Options tunes a Fetcher. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Client tunes the HTTP reads (page size, timeouts, retries, bounds).
	Client *ClientOptions
	// Interval between scheduled runs; default 24h; negative: no schedule,
	// Run syncs only when triggered (and retries failed endpoints).
	Interval time.Duration
	// Jitter: each wait is Interval plus up to Jitter; default Interval/10.
	Jitter time.Duration
	// EndpointBackoff is how long an endpoint whose fetch failed (after the
	// client's retries) is left alone; default 5m.
	EndpointBackoff time.Duration
	// LeaseTTL is how long the resync lease lasts without renewal; the run
	// renews it every LeaseTTL/3. Default 2m.
	LeaseTTL time.Duration
	// Holder names this process in the lease; default host-pid-random.
	Holder string
	// Node names this node across restarts (say, host and data directory):
	// a lease that a process of the same Node left behind is from a run
	// that crashed, and does not block. Empty: only the holder's absence
	// (it no longer answers on NATS) or the lease's expiry frees it.
	Node string
	// Endpoints to sync; default Endpoints().
	Endpoints []Endpoint
	// Progress, if not nil, is called from the syncing goroutine after each
	// page and when each endpoint is done; it must return quickly.
	Progress func(Progress)
	Metrics  *Metrics
	Logger   *slog.Logger
}

// Progress reports where a run is: a progress bar draws Endpoint with
// Done of Total.
type Progress struct {
	// Endpoint is the path, "/v2/spells/".
	Endpoint string
	// Done is the number of records read so far; Total the count the API
	// announced (0 while unknown).
	Done, Total int
	// Page is the last page read.
	Page int
	// Index counts endpoints from 1 to Endpoints.
	Index, Endpoints int
	// Finished is set on the last report of an endpoint, with its Summary.
	Finished bool
	Summary  *EndpointSummary
}

// EndpointSummary is what one run did for one endpoint.
type EndpointSummary struct {
	Endpoint                                          string
	Fetched, New, Changed, Removed, Unchanged, Errors int
	Pages                                             int
	// Skipped is set when the endpoint was left alone (backoff after
	// failures).
	Skipped bool
	// Err is why the endpoint was not read completely (or published), if so.
	Err error
}

// String is the one-line summary people read.
func (s EndpointSummary) String() string {
	if s.Skipped {
		return fmt.Sprintf("%s: skipped (%v)", s.Endpoint, s.Err)
	}
	line := fmt.Sprintf("%s: fetched %d, new %d, changed %d, removed %d, unchanged %d, errors %d",
		s.Endpoint, s.Fetched, s.New, s.Changed, s.Removed, s.Unchanged, s.Errors)
	if s.Err != nil {
		line += fmt.Sprintf(" (%v)", s.Err)
	}
	return line
}

// Summary is what one run did.
type Summary struct {
	Started   time.Time
	Duration  time.Duration
	Endpoints []EndpointSummary
}

// Lines is the one-line summary of each endpoint, then the total.
func (s Summary) Lines() []string {
	out := make([]string, 0, len(s.Endpoints)+1)
	for _, e := range s.Endpoints {
		out = append(out, e.String())
	}
	t := s.Totals()
	return append(out, fmt.Sprintf("%s in %s", t, s.Duration.Round(time.Millisecond)))
}

// Totals adds up the endpoints.
func (s Summary) Totals() EndpointSummary {
	t := EndpointSummary{Endpoint: "total"}
	for _, e := range s.Endpoints {
		t.Fetched += e.Fetched
		t.New += e.New
		t.Changed += e.Changed
		t.Removed += e.Removed
		t.Unchanged += e.Unchanged
		t.Errors += e.Errors
		t.Pages += e.Pages
	}
	return t
}

// Fetcher resyncs Open5e into the ENTITIES stream. The stream and the state
// bucket must exist (ingest.EnsureResources).
type Fetcher struct {
	js      jetstream.JetStream
	baseURL string
	opts    Options
	client  *Client
	log     *slog.Logger

	running sync.Mutex // one run at a time in this process
	trigger chan struct{}
}

// NewFetcher returns a fetcher reading the API at baseURL (LiveURL
// when empty) and publishing through js. A base URL the client cannot use
// is an error here, not a fetcher that never syncs.
func NewFetcher(js jetstream.JetStream, baseURL string, opts *Options) (*Fetcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if baseURL == "" {
		baseURL = LiveURL
	}
	if o.Interval == 0 {
		o.Interval = 24 * time.Hour
	}
	if o.Jitter == 0 && o.Interval > 0 {
		o.Jitter = o.Interval / 10
	}
	if o.EndpointBackoff <= 0 {
		o.EndpointBackoff = 5 * time.Minute
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 2 * time.Minute
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Holder = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if len(o.Endpoints) == 0 {
		o.Endpoints = Endpoints()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var co ClientOptions
	if o.Client != nil {
		co = *o.Client
	}
	if co.Observer == nil && o.Metrics != nil {
		co.Observer = o.Metrics
	}
	if co.Logger == nil {
		co.Logger = o.Logger
	}
	client, err := NewClient(baseURL, &co)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		paths[i] = ep.Path()
	}
	o.Metrics.initEndpoints(paths)
	return &Fetcher{
		js: js, baseURL: baseURL, opts: o, client: client,
		log: o.Logger, trigger: make(chan struct{}, 1),
	}, nil
}

// Trigger asks Run to start a run now (lorekeeper sync in the same
// process). It does not wait.
func (f *Fetcher) Trigger() {
	select {
	case f.trigger <- struct{}{}:
	default:
	}
}

// Run resyncs on the schedule until ctx is done: at once when the last run
// (by any process) finished more than Interval ago, then every Interval
// plus jitter, and whenever Trigger is called. Endpoints that failed are
// tried again, alone, once their EndpointBackoff is over. Run returns only
// ctx's error.
func (f *Fetcher) Run(ctx context.Context) error {
	scheduled := f.opts.Interval > 0
	// Without a schedule, a full run waits for Trigger.
	const never = 100 * 365 * 24 * time.Hour
	nextFull := time.Now().Add(never)
	if scheduled {
		nextFull = time.Now().Add(f.untilDue(ctx))
	}
	var retry []Endpoint
	for {
		wake := nextFull
		if len(retry) > 0 {
			wake = minTime(wake, time.Now().Add(f.opts.EndpointBackoff))
		}
		t := time.NewTimer(time.Until(wake))
		full := true
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
			full = !time.Now().Before(nextFull)
		case <-f.trigger:
			t.Stop()
		}
		eps := f.opts.Endpoints
		if !full {
			eps = retry
		}
		sum, err := f.sync(ctx, eps)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrLeaseHeld):
			f.log.Info("open5e resync skipped: another run holds the lease", "lease", err, "retry", f.leaseRetry(err).Sub(time.Now()).Round(time.Second))
		case err != nil:
			f.log.Warn("open5e resync finished with errors", "err", err, "duration", sum.Duration)
		default:
			f.log.Info("open5e resync done", "duration", sum.Duration, "summary", sum.Totals().String())
		}
		retry = nil // eps may be the old retry list
		for _, es := range sum.Endpoints {
			if es.Err != nil && !es.Skipped {
				retry = append(retry, endpointByPath(eps, es.Endpoint))
			}
		}
		switch {
		case !scheduled:
			nextFull = time.Now().Add(never)
		case full && !errors.Is(err, ErrLeaseHeld):
			nextFull = time.Now().Add(f.opts.Interval)
			if f.opts.Jitter > 0 {
				nextFull = nextFull.Add(mrand.N(f.opts.Jitter))
			}
		case full:
			// Someone else is running it: look again when the schedule
			// says, or, while a run is still due, when their lease ends
			// (a live holder renews it; a dead one's ends for good).
			nextFull = time.Now().Add(f.untilDue(ctx))
			if !nextFull.After(time.Now()) {
				nextFull = f.leaseRetry(err)
			}
		}
	}
}

// leaseRetry is when to try again for a lease that err says is held: just
// after it expires, and at the latest after one lease lifetime.
func (f *Fetcher) leaseRetry(err error) time.Time {
	now := time.Now()
	latest := now.Add(f.opts.LeaseTTL)
	var held *LeaseHeldError
	if !errors.As(err, &held) {
		return latest
	}
	at := held.Expires.Add(100 * time.Millisecond)
	switch {
	case at.Before(now):
		return now
	case at.After(latest):
		return latest
	}
	return at
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func endpointByPath(eps []Endpoint, path string) Endpoint {
	for _, ep := range eps {
		if ep.Path() == path {
			return ep
		}
	}
	return Endpoint{}
}

// untilDue is how long to wait before the first scheduled run.
func (f *Fetcher) untilDue(ctx context.Context) time.Duration {
	kv, err := f.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return 0
	}
	e, err := kv.Get(ctx, LastRunKey)
	if err != nil {
		return 0
	}
	last, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	if err != nil {
		return 0
	}
	return max(0, time.Until(last.Add(f.opts.Interval)))
}

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
		err = errors.Join(err, perr)
	}
	return sum, err
}

type run struct {
	f   *Fetcher
	kv  jetstream.KeyValue
	sum *Summary
	eps []Endpoint
}

func (r *run) do(ctx context.Context) error {
	f := r.f
	eps := r.eps
	now := time.Now()

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
		es := EndpointSummary{Endpoint: ep.Path()}
		switch {
		case catErr != nil:
			es.Err = catErr
			es.Errors = 1
			r.failed(st, now, catErr, true)
		case st.GetBackoffUntil() != nil && now.Before(st.GetBackoffUntil().AsTime()):
			es.Skipped = true
			es.Err = fmt.Errorf("backing off until %s after: %s", st.GetBackoffUntil().AsTime().Format(time.RFC3339), st.GetLastError())
		default:
			r.syncEndpoint(ctx, ep, i, len(eps), cat, st, v2Keys, &es)
		}
		if ep.Version == "v2" {
			for k := range st.GetEntities() {
				v2Keys = append(v2Keys, k)
			}
		}
		if !es.Skipped {
			st.LastAttempt = timestamppb.New(now)
			st.LastCounts = &lkv1.SyncCounts{
				Fetched: uint64(es.Fetched), Created: uint64(es.New), Changed: uint64(es.Changed),
				Removed: uint64(es.Removed), Unchanged: uint64(es.Unchanged), Errors: uint64(es.Errors),
				Pages: uint64(es.Pages),
			}
			if err := r.saveState(context.WithoutCancel(ctx), ep, st); err != nil {
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
	return errors.Join(errs...)
}

// failed records an endpoint failure in its state; backoff leaves the
// endpoint alone for EndpointBackoff.
func (r *run) failed(st *lkv1.EndpointState, now time.Time, err error, backoff bool) {
	st.LastError = err.Error()
	if backoff {
		st.BackoffUntil = timestamppb.New(now.Add(r.f.opts.EndpointBackoff))
	}
}

func (r *run) syncEndpoint(ctx context.Context, ep Endpoint, i, n int, cat *Catalog, st *lkv1.EndpointState, v2Keys []string, es *EndpointSummary) {
	f := r.f
	now := time.Now()
	res := FetchEndpoint(ctx, f.client, ep, cat, func(p Page) {
		if f.opts.Progress != nil {
			f.opts.Progress(Progress{Endpoint: ep.Path(), Index: i + 1, Endpoints: n, Page: p.Number, Done: p.Records, Total: p.Count})
		}
	})
	entities := res.Entities
	if ep.Version == "v1" {
		cov := CoverageFromKeys(v2Keys)
		entities = FilterV1(entities, cov)
	}
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
	for _, e := range entities {
		listed[e.Key] = true
		if old, had := st.Entities[e.Key]; had && old == e.ContentHash {
			es.Unchanged++
			continue
		}
		toPublish = append(toPublish, e)
	}
	var pubErr error
	errs := r.publishAll(ctx, toPublish)
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
		st.Entities[e.Key] = e.ContentHash
		f.opts.Metrics.publishedAdd(e.Kind.Slug(), e.Document.GetKey(), outcome)
	}

	switch {
	case res.Err != nil:
		es.Err = errors.Join(res.Err, pubErr)
		r.failed(st, now, es.Err, true)
		return
	case pubErr != nil:
		es.Err = pubErr
		r.failed(st, now, pubErr, false)
		return
	case len(res.Invalid) > 0:
		// A record we could not read may be one we have: keep everything.
		es.Err = fmt.Errorf("%d invalid records: %w", len(res.Invalid), errors.Join(res.Invalid...))
		r.failed(st, now, es.Err, false)
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
		es.Removed++
	}
	if pubErr != nil {
		es.Err = pubErr
		r.failed(st, now, pubErr, false)
		return
	}
	st.Digest = digest(st.Entities)
	st.LastSuccess = timestamppb.New(now)
	st.LastError = ""
	st.BackoffUntil = nil
	f.opts.Metrics.succeeded(ep.Path(), float64(now.UnixNano())/1e9)
}

// publishAll publishes upserts of es through one publish window and
// returns each one's error (nil when the stream acked it).
func (r *run) publishAll(ctx context.Context, es []*lkv1.Entity) []error {
	errs := make([]error, len(es))
	msgs := make([]*nats.Msg, 0, len(es))
	built := make([]int, 0, len(es)) // msgs[j] is the upsert of es[built[j]]
	now := time.Now()
	for i, e := range es {
		m, err := ingest.UpsertMsg(e, now)
		if err != nil {
			errs[i] = err
			continue
		}
		msgs = append(msgs, m)
		built = append(built, i)
	}
	for j, err := range ingest.PublishAll(ctx, r.f.js, msgs, nil) {
		errs[built[j]] = err
	}
	return errs
}

func (r *run) tombstone(ctx context.Context, ep Endpoint, key string) error {
	kind := ep.Kind
	if p, ok := lkv1.ParseEntityKey(key); ok {
		kind = p.Kind
	}
	m, err := ingest.TombstoneMsg(&lkv1.Tombstone{
		Key: key, Kind: kind, Source: ep.Source(), Reason: "removed from " + ep.Path(),
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

// digest is the SHA-256 over the sorted (key, content hash) pairs.
func digest(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\n", k, m[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (r *run) loadState(ctx context.Context, ep Endpoint) (*lkv1.EndpointState, error) {
	st := &lkv1.EndpointState{Endpoint: ep.Path()}
	e, err := r.kv.Get(ctx, StateKey(ep))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", ep.Path(), err)
	}
	if err := proto.Unmarshal(e.Value(), st); err != nil {
		return nil, fmt.Errorf("decode state of %s: %w", ep.Path(), err)
	}
	return st, nil
}

func (r *run) saveState(ctx context.Context, ep Endpoint, st *lkv1.EndpointState) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode state of %s: %w", ep.Path(), err)
	}
	if _, err := r.kv.Put(ctx, StateKey(ep), b); err != nil {
		return fmt.Errorf("save state of %s: %w", ep.Path(), err)
	}
	return nil
}

// State returns the stored resync state of every endpoint the fetcher
// syncs, for status commands. Endpoints never synced have an empty state.
func (f *Fetcher) State(ctx context.Context) ([]*lkv1.EndpointState, error) {
	kv, err := f.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("open state bucket %s: %w", ingest.StateBucket, err)
	}
	r := &run{f: f, kv: kv}
	var out []*lkv1.EndpointState
	for _, ep := range f.opts.Endpoints {
		st, err := r.loadState(ctx, ep)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

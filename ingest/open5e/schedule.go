// Run's schedule: when the next full resync is due, when failed endpoints
// are tried again, and when a held lease is worth another look.

package open5e

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
)

// Trigger asks Run to start a full run now, and does not wait for it.
// The lorekeeper command does not call it: "lorekeeper sync" runs Sync in
// its own process, which the lease keeps from overlapping with Run.
func (f *Fetcher) Trigger() {
	select {
	case f.trigger <- struct{}{}:
	default:
	}
}

// Run resyncs on the schedule until ctx is done: at once when the last run
// (by any process) finished more than Interval ago, then every Interval
// plus jitter, and whenever Trigger is called. Endpoints that failed are
// tried again, alone, once their EndpointBackoff is over, or after
// StreamRetry when only NATS failed them. Run returns only ctx's error.
func (f *Fetcher) Run(ctx context.Context) error {
	scheduled := f.opts.Interval > 0
	// Without a schedule, a full run waits for Trigger.
	const never = 100 * 365 * 24 * time.Hour
	nextFull := time.Now().Add(never)
	if scheduled {
		nextFull = time.Now().Add(f.untilDue(ctx))
	}
	var retry []Endpoint
	// retryStream: every endpoint to retry failed on NATS's side alone.
	retryStream := false
	for {
		wake := nextFull
		if len(retry) > 0 {
			after := f.opts.EndpointBackoff
			if retryStream {
				after = f.opts.StreamRetry
			}
			wake = minTime(wake, time.Now().Add(after))
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
			f.log.Info("open5e resync skipped: another run holds the lease", "lease", err, "retry", time.Until(f.leaseRetry(err)).Round(time.Second))
		case err != nil:
			f.log.Warn("open5e resync finished with errors", "err", err, "duration", sum.Duration)
		default:
			f.log.Info("open5e resync done", "duration", sum.Duration, "summary", sum.Totals().String())
		}
		retry, retryStream = nil, true // eps may be the old retry list
		for _, es := range sum.Endpoints {
			if es.Err != nil && !es.Skipped {
				retry = append(retry, endpointByPath(eps, es.Endpoint))
				retryStream = retryStream && es.StreamFailed
			}
		}
		if err != nil && len(sum.Endpoints) == 0 && !errors.Is(err, ErrLeaseHeld) {
			// NATS failed before any endpoint (the state bucket, the
			// lease): the whole run is retried soon, not at the next
			// scheduled one.
			retry = eps
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
	if v := normalizerOf(ctx, kv); v < NormalizerVersion {
		f.log.Info("the last Open5e resync read the records with an older normalizer; resyncing now to store what it changes",
			"last_run", last.Format(time.RFC3339), "normalizer", v, "current", NormalizerVersion)
		return 0
	}
	if now := time.Now(); last.After(now) {
		// A clock set wrong, or a hand edit: trusted, it would put the
		// next run off until after that date.
		f.log.Warn("the last Open5e resync's finish time is in the future; treating it as now",
			"last_run", last.Format(time.RFC3339), "ahead_by", last.Sub(now).Round(time.Second), "next_run_in", f.opts.Interval)
		last = now
	}
	return max(0, time.Until(last.Add(f.opts.Interval)))
}

// normalizerOf is the NormalizerVersion the last full resync recorded: 1
// before versions were recorded.
func normalizerOf(ctx context.Context, kv jetstream.KeyValue) int {
	e, err := kv.Get(ctx, NormalizerKey)
	if err != nil {
		return 1
	}
	v, err := strconv.Atoi(string(e.Value()))
	if err != nil {
		return 1
	}
	return v
}

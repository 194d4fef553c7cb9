package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bounds of the backoff between attempts while a role waits for NATS and
// its JetStream resources: quick at first (a cluster forming takes
// seconds), then no more than every 15 s.
const (
	waitMinBackoff = 250 * time.Millisecond
	waitMaxBackoff = 15 * time.Second
)

var errNotYet = errors.New("not tried yet")

// errConfig marks an error no retry can fix: the process exits at once.
var errConfig = errors.New("configuration error")

// waitFor calls f until it succeeds, fails with a configuration error, or
// ctx ends. Between attempts it sleeps a bounded exponential backoff with
// full jitter, so that many processes restarted together do not retry in
// step. The first failure is logged once, saying what it waits for, and the
// end of a wait is logged too. w, if not nil, reports the wait to /readyz.
func waitFor(ctx context.Context, log *slog.Logger, w *waits, what string, f func(context.Context) error) error {
	delay := waitMinBackoff
	start := time.Now()
	w.set(what, errNotYet)
	for attempt := 1; ; attempt++ {
		err := f(ctx)
		if err == nil {
			if attempt > 1 {
				log.Info("done waiting for "+what, "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond))
			}
			w.set(what, nil)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isConfigError(err) {
			return fmt.Errorf("%w: %w", errConfig, err)
		}
		if attempt == 1 {
			log.Warn("waiting for "+what+"; retrying with backoff", "err", err)
		}
		w.set(what, err)
		t := time.NewTimer(rand.N(delay) + delay/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, waitMaxBackoff)
	}
}

// isConfigError reports whether err is one that waiting cannot fix: the
// server refuses the stream or consumer configuration itself (a subject
// overlap, a name in use with another configuration, replicas the cluster
// cannot have), or the credentials.
func isConfigError(err error) bool {
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) {
		return true
	}
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode {
	case 10005: // no suitable peers for placement: the cluster is still forming
		return false
	case 10074, // replicas > 1 on a server that is not clustered
		10039: // JetStream not enabled for the account
		return true
	}
	return apiErr.Code == 400
}

// waits is what a process is waiting for, for /readyz. The zero value is
// ready; a nil *waits records nothing.
type waits struct {
	mu  sync.Mutex
	why map[string]error
}

func (w *waits) set(what string, err error) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.why, what)
		return
	}
	if w.why == nil {
		w.why = map[string]error{}
	}
	w.why[what] = err
}

// check is the readiness check: not ready while anything is awaited.
func (w *waits) check(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for what, err := range w.why {
		errs = append(errs, fmt.Errorf("waiting for %s: %w", what, err))
	}
	return errors.Join(errs...)
}

// waitConnected waits until nc is connected (nats.RetryOnFailedConnect
// keeps trying in the background meanwhile).
func waitConnected(ctx context.Context, log *slog.Logger, w *waits, nc *nats.Conn, url string) error {
	return waitFor(ctx, log, w, "NATS at "+url, func(context.Context) error {
		if nc.IsConnected() {
			return nil
		}
		if err := nc.LastError(); err != nil {
			return err
		}
		return errors.New("not connected yet")
	})
}

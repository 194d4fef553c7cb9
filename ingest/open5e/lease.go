package open5e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LeaseKey is the key in the state bucket that says who is resyncing.
const LeaseKey = "lease.open5e-resync"

// ErrLeaseHeld is returned by Sync when another run (in this process or
// another) holds the resync lease.
var ErrLeaseHeld = errors.New("another open5e resync is running")

// leaseValue is what the lease key holds. The expiry is in the value, not
// a per-key TTL, because the state bucket is shared and created without
// per-message TTLs; a holder that dies loses the lease when it expires.
type leaseValue struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// lease is a held lease; rev is the revision of our last write, which
// every renewal and the release compare against (CAS), so two holders can
// never both succeed.
type lease struct {
	kv     jetstream.KeyValue
	holder string
	ttl    time.Duration
	rev    uint64
}

func acquire(ctx context.Context, kv jetstream.KeyValue, holder string, ttl time.Duration) (*lease, error) {
	l := &lease{kv: kv, holder: holder, ttl: ttl}
	val, err := json.Marshal(leaseValue{Holder: holder, Expires: time.Now().Add(ttl)})
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, LeaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err := kv.Create(ctx, LeaseKey, val)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return nil, ErrLeaseHeld
		}
		if err != nil {
			return nil, fmt.Errorf("create resync lease: %w", err)
		}
		l.rev = rev
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("read resync lease: %w", err)
	}
	var cur leaseValue
	if json.Unmarshal(e.Value(), &cur) == nil && cur.Holder != holder && time.Now().Before(cur.Expires) {
		return nil, ErrLeaseHeld
	}
	// Expired, unreadable, or our own from a run that did not release it.
	rev, err := kv.Update(ctx, LeaseKey, val, e.Revision())
	if err != nil {
		if isCASConflict(err) {
			return nil, ErrLeaseHeld
		}
		return nil, fmt.Errorf("take over resync lease: %w", err)
	}
	l.rev = rev
	return l, nil
}

func isCASConflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence)
}

func (l *lease) renew(ctx context.Context) error {
	val, err := json.Marshal(leaseValue{Holder: l.holder, Expires: time.Now().Add(l.ttl)})
	if err != nil {
		return err
	}
	rev, err := l.kv.Update(ctx, LeaseKey, val, l.rev)
	if err != nil {
		if isCASConflict(err) {
			return fmt.Errorf("renew resync lease: %w", ErrLeaseHeld)
		}
		return fmt.Errorf("renew resync lease: %w", err)
	}
	l.rev = rev
	return nil
}

func (l *lease) release(ctx context.Context) error {
	if err := l.kv.Delete(ctx, LeaseKey, jetstream.LastRevision(l.rev)); err != nil && !isCASConflict(err) {
		return fmt.Errorf("release resync lease: %w", err)
	}
	return nil
}

package open5e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LeaseKey is the key in the state bucket that says who is resyncing.
const LeaseKey = "lease.open5e-resync"

// ErrLeaseHeld is returned by Sync when another run (in this process or
// another) holds the resync lease.
var ErrLeaseHeld = errors.New("another open5e resync is running")

// LeaseHeldError is ErrLeaseHeld from another process: who holds the
// lease, and when it ends unless renewed.
type LeaseHeldError struct {
	Holder  string
	Expires time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%v: %s holds the lease until %s", ErrLeaseHeld, e.Holder, e.Expires.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLeaseHeld) hold.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// pingTimeout bounds the question "is the holder still there?". A holder
// that does not answer in time is taken to be alive (slow, not gone).
const pingTimeout = 2 * time.Second

// leaseValue is what the lease key holds. The expiry is in the value, not
// a per-key TTL, because the state bucket is shared and created without
// per-message TTLs.
//
// Expiry alone would leave a crashed run's lease in the way for its whole
// lifetime, so the value also says how to tell that the holder is gone:
// Ping is a NATS subject the holder answers while it holds the lease (the
// server answers "no responders" at once when the holder's connection is
// gone), and Node names the node across restarts, so that a node that
// crashed and came back takes its own lease back.
type leaseValue struct {
	Holder  string    `json:"holder"`
	Node    string    `json:"node,omitempty"`
	Ping    string    `json:"ping,omitempty"`
	Expires time.Time `json:"expires"`
}

// lease is a held lease; rev is the revision of our last write, which
// every renewal and the release compare against (CAS), so two holders can
// never both succeed.
type lease struct {
	kv   jetstream.KeyValue
	val  leaseValue
	ttl  time.Duration
	rev  uint64
	ping *nats.Subscription
}

// leaseOwner is who asks for the lease: the holder's name, its node and
// the connection that answers pings (nil: none, only expiry frees the
// lease).
type leaseOwner struct {
	holder, node string
	nc           *nats.Conn
}

func acquire(ctx context.Context, kv jetstream.KeyValue, who leaseOwner, ttl time.Duration) (_ *lease, err error) {
	l := &lease{kv: kv, ttl: ttl, val: leaseValue{Holder: who.holder, Node: who.node}}
	if who.nc != nil {
		// Answer pings before the lease names the subject, so that nobody
		// who reads the lease finds the subject without a responder.
		l.val.Ping = who.nc.NewInbox()
		holder := []byte(who.holder)
		l.ping, err = who.nc.Subscribe(l.val.Ping, func(m *nats.Msg) { _ = m.Respond(holder) })
		if err != nil {
			return nil, fmt.Errorf("resync lease: answer pings: %w", err)
		}
		defer func() {
			if err != nil {
				_ = l.ping.Unsubscribe()
			}
		}()
		fctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := who.nc.FlushWithContext(fctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("resync lease: answer pings: %w", err)
		}
	}
	val, err := l.value()
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
	if json.Unmarshal(e.Value(), &cur) == nil && cur.Holder != who.holder && time.Now().Before(cur.Expires) &&
		!(who.node != "" && cur.Node == who.node) && !holderGone(ctx, who.nc, cur.Ping) {
		return nil, &LeaseHeldError{Holder: cur.Holder, Expires: cur.Expires}
	}
	// Expired, unreadable, ours from a run that did not release it (this
	// process, or this node before a restart), or its holder is gone.
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

// holderGone reports whether nobody answers on the holder's ping subject
// any more. Any other outcome (an answer, a timeout, no way to ask) counts
// as alive.
func holderGone(ctx context.Context, nc *nats.Conn, ping string) bool {
	if nc == nil || ping == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err := nc.RequestWithContext(ctx, ping, nil)
	return errors.Is(err, nats.ErrNoResponders)
}

func isCASConflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence)
}

func (l *lease) value() ([]byte, error) {
	l.val.Expires = time.Now().Add(l.ttl)
	return json.Marshal(l.val)
}

func (l *lease) renew(ctx context.Context) error {
	val, err := l.value()
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
	if l.ping != nil {
		_ = l.ping.Unsubscribe() // the connection may be closing
	}
	if err := l.kv.Delete(ctx, LeaseKey, jetstream.LastRevision(l.rev)); err != nil && !isCASConflict(err) {
		return fmt.Errorf("release resync lease: %w", err)
	}
	return nil
}

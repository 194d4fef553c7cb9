package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// AsyncPublisher is the part of jetstream.JetStream that PublishAll uses.
type AsyncPublisher interface {
	PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// WindowOptions tune PublishAll. A nil *WindowOptions, and every zero
// field, means the default.
type WindowOptions struct {
	// Window is how many messages are in flight at once: enough to hide the
	// round trip, few enough that a failure costs little to retry and the
	// client's limit of pending async publishes (4000) is never reached.
	// Default 256.
	Window int
	// AckTimeout bounds the wait for the acks of one window; a message not
	// acked by then counts as failed. Default 30s.
	AckTimeout time.Duration
}

// PublishAll publishes msgs asynchronously, a window at a time, and returns
// once every one is acked or has failed, so that state written next never
// claims more than the stream holds. errs[i] is msgs[i]'s error, nil when
// the stream acked it; errs is nil when every message was acked.
func PublishAll(ctx context.Context, js AsyncPublisher, msgs []*nats.Msg, opts *WindowOptions) (errs []error) {
	var o WindowOptions
	if opts != nil {
		o = *opts
	}
	if o.Window <= 0 {
		o.Window = 256
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = 30 * time.Second
	}
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(msgs))
		}
		errs[i] = fmt.Errorf("publish %s: %w", msgs[i].Header.Get(HeaderKey), err)
	}
	futs := make([]jetstream.PubAckFuture, o.Window)
	for lo := 0; lo < len(msgs); lo += o.Window {
		hi := min(lo+o.Window, len(msgs))
		for i := lo; i < hi; i++ {
			futs[i-lo] = nil
			if err := ctx.Err(); err != nil {
				fail(i, err)
				continue
			}
			f, err := js.PublishMsgAsync(msgs[i])
			if err != nil {
				fail(i, err)
				continue
			}
			futs[i-lo] = f
		}
		timeout := time.NewTimer(o.AckTimeout)
		expired := false
		for i := lo; i < hi; i++ {
			f := futs[i-lo]
			if f == nil {
				continue
			}
			// An answer already there counts, even past the timeout.
			select {
			case <-f.Ok():
				continue
			case err := <-f.Err():
				fail(i, err)
				continue
			default:
			}
			if expired {
				// Every later ack of the window is as late.
				fail(i, fmt.Errorf("no ack within %s", o.AckTimeout))
				continue
			}
			select {
			case <-f.Ok():
			case err := <-f.Err():
				fail(i, err)
			case <-ctx.Done():
				fail(i, ctx.Err())
			case <-timeout.C:
				expired = true
				fail(i, fmt.Errorf("no ack within %s", o.AckTimeout))
			}
		}
		timeout.Stop()
	}
	return errs
}

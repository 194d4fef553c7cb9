// Package natsconsume is the embedder's JetStream consumer: it fetches entity
// events in batches from a durable pull consumer, embeds what changed in one
// model call per batch, writes documents, indexes and vectors through the
// storage package, and acknowledges only once the write is durable.
package natsconsume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Names of the dead-letter stream and its subjects.
const (
	DeadLetterStream  = "ENTITIES_DLQ"
	DeadLetterSubject = "lorekeeper.deadletter"
)

// Store is what the consumer writes through.
type Store interface {
	Apply(ctx context.Context, writes []badgerstore.Write) error
	CachedVector(ctx context.Context, model, contentHash string) ([]float32, bool, error)
}

// Model embeds texts.
type Model interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Info() embedder.ModelInfo
}

// Options configure a Consumer. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Durable is the durable consumer's name; one per query node, since each
	// node keeps its own replica. Default "embedder".
	Durable string
	// Batch is the most messages fetched at once. Default 256.
	Batch int
	// MaxWait bounds how long a fetch waits for a full batch. Default 500ms.
	MaxWait time.Duration
	// IdleWait is how long a fetch waits for the next message once a fetch
	// found nothing new; the first to come is taken with whatever else the
	// stream holds by then. Default 30s: a caught-up consumer asks the
	// server once in IdleWait rather than every MaxWait (two requests a
	// second, and their timeouts, were most of an idle node's traffic),
	// and still sees a new message at once.
	IdleWait time.Duration
	// MaxDeliver is how often a message is tried before it goes to the
	// dead-letter stream. Default 5.
	MaxDeliver int
	// AckWait is how long the server waits for an ack before redelivering.
	// Default 10s: short, so that the batch a dead process held comes back
	// soon after it died. While a batch is being embedded and written the
	// consumer tells the server it is still working on it every AckWait/3,
	// so a slow batch is never redelivered behind its back.
	AckWait time.Duration
	// Room, if set, is asked before every fetch whether the disk has room
	// for another batch; while it returns an error the consumer fetches
	// nothing (the stream keeps the messages), reports the error from
	// Paused and asks again every RoomEvery. Badger writes through
	// memory-mapped files, which a full disk turns into a SIGBUS crash
	// rather than an error.
	Room func() error
	// RoomEvery is how often a paused consumer asks Room again. Default 5s.
	RoomEvery time.Duration
	// LagEvery is how often the consumer asks the server for its lag
	// (Lag), besides right after a batch that left nothing behind it.
	// Default 2s.
	LagEvery time.Duration
	Logger   *slog.Logger
	Metrics  *Metrics
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Durable == "" {
		out.Durable = "embedder"
	}
	if out.Batch <= 0 {
		out.Batch = 256
	}
	if out.MaxWait <= 0 {
		out.MaxWait = 500 * time.Millisecond
	}
	if out.IdleWait <= 0 {
		out.IdleWait = 30 * time.Second
	}
	if out.MaxDeliver <= 0 {
		out.MaxDeliver = 5
	}
	if out.AckWait <= 0 {
		out.AckWait = DefaultAckWait
	}
	if out.RoomEvery <= 0 {
		out.RoomEvery = 5 * time.Second
	}
	if out.LagEvery <= 0 {
		out.LagEvery = 2 * time.Second
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Metrics == nil {
		out.Metrics = NewMetrics(nil)
	}
	return out
}

// DefaultAckWait is Options.AckWait's default.
const DefaultAckWait = 10 * time.Second

// ErrConsumerLost is returned by Run when the durable consumer or its
// stream no longer exists on the server (deleted, or a NATS server that
// lost its store): nothing more will be delivered to it, so the caller
// makes it again (and checks its store against the stream).
var ErrConsumerLost = errors.New("natsconsume: the durable consumer is gone")

// Consumer moves entity events from the stream into storage.
type Consumer struct {
	js      jetstream.JetStream
	store   Store
	model   Model
	opts    Options
	pending atomic.Uint64
	// lagKnown is set once pending has been read from the server: until
	// then a zero means "not asked yet", not "caught up".
	lagKnown atomic.Bool
	// paused holds Room's error while the consumer waits for disk space.
	paused atomic.Pointer[error]
	// lagNow asks watchLag to read the lag before its next tick.
	lagNow chan struct{}
}

// New returns a Consumer reading stream through js. It borrows js, store and
// model; whoever created them closes them.
func New(js jetstream.JetStream, store Store, model Model, opts *Options) *Consumer {
	return &Consumer{js: js, store: store, model: model, opts: opts.withDefaults(), lagNow: make(chan struct{}, 1)}
}

// ConsumerConfig is the durable pull consumer's configuration.
func (c *Consumer) ConsumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       c.opts.Durable,
		Description:   "LoreKeeper embedder: entity events into storage",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.opts.AckWait,
		// One more than MaxDeliver: the consumer itself dead-letters a
		// message on its last delivery, so the server never drops it.
		MaxDeliver:    c.opts.MaxDeliver + 1,
		MaxAckPending: c.opts.Batch * 4,
		FilterSubject: lkv1.SubjectPrefix + ".>",
	}
}

// Ensure creates the durable consumer and the dead-letter stream if absent.
func (c *Consumer) Ensure(ctx context.Context, streamName string, replicas int) (jetstream.Consumer, error) {
	if _, err := c.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        DeadLetterStream,
		Description: "LoreKeeper entity events the embedder could not process, with the error",
		Subjects:    []string{DeadLetterSubject + ".>"},
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	}); err != nil {
		return nil, fmt.Errorf("ensure dead-letter stream: %w", err)
	}
	cons, err := c.js.CreateOrUpdateConsumer(ctx, streamName, c.ConsumerConfig())
	if err != nil {
		return nil, fmt.Errorf("ensure consumer %s on %s: %w", c.opts.Durable, streamName, err)
	}
	return cons, nil
}

// Run consumes until ctx is done, or until the consumer is found gone
// (ErrConsumerLost). A batch in flight when ctx ends is finished (written
// and acknowledged) before Run returns, so a shutdown leaves every message
// either stored and acked or unacked for redelivery.
func (c *Consumer) Run(ctx context.Context, cons jetstream.Consumer) error {
	parent := ctx
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		c.watchLag(ctx, cons, lost)
	}()
	defer func() { <-watched }()
	idle := false
	for {
		if ctx.Err() != nil {
			if parent.Err() == nil {
				return context.Cause(ctx)
			}
			return nil
		}
		if !c.haveRoom(ctx) {
			continue
		}
		msgs, err := c.fetch(ctx, cons, idle)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			c.opts.Logger.Warn("fetch from stream failed; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if idle = len(msgs) == 0; idle {
			continue
		}
		// Finish the batch even if ctx is cancelled meanwhile: it was fetched,
		// and writing it now spares a redelivery.
		stop := c.keepAlive(msgs)
		c.process(context.WithoutCancel(ctx), ctx.Done(), msgs)
		stop()
	}
}

// fetch returns the next batch: up to Batch messages within MaxWait, or,
// when the last fetch found nothing (idle), the first message to come
// within IdleWait and whatever else the stream holds by then.
func (c *Consumer) fetch(ctx context.Context, cons jetstream.Consumer, idle bool) ([]jetstream.Msg, error) {
	if !idle {
		return c.collect(cons.Fetch(c.opts.Batch, jetstream.FetchMaxWait(c.opts.MaxWait)))
	}
	wait, cancel := context.WithTimeout(ctx, c.opts.IdleWait)
	defer cancel()
	first, err := c.collect(cons.Fetch(1, jetstream.FetchContext(wait)))
	if err != nil || len(first) == 0 || c.opts.Batch == 1 {
		return first, err
	}
	rest, err := c.collect(cons.FetchNoWait(c.opts.Batch - 1))
	if err != nil {
		// The first is fetched and must be processed: the rest comes with
		// the next fetch.
		c.opts.Logger.Debug("fetch after an idle wait failed", "err", err)
	}
	return append(first, rest...), nil
}

// collect reads a fetch's messages until it ends.
func (c *Consumer) collect(batch jetstream.MessageBatch, err error) ([]jetstream.Msg, error) {
	if err != nil {
		return nil, err
	}
	var msgs []jetstream.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		c.opts.Logger.Debug("fetch ended early", "err", err)
	}
	return msgs, nil
}

// haveRoom asks Options.Room whether another batch fits on the disk; when
// it does not, it logs why (once, and again when space comes back), waits
// RoomEvery and reports false.
func (c *Consumer) haveRoom(ctx context.Context) bool {
	if c.opts.Room == nil {
		return true
	}
	err := c.opts.Room()
	if err == nil {
		if c.paused.Swap(nil) != nil {
			c.opts.Logger.Info("disk space is back: storing entities again")
		}
		return true
	}
	if prev := c.paused.Swap(&err); prev == nil {
		c.opts.Logger.Error("not storing entities until disk space is freed: the stream keeps them meanwhile", "err", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(c.opts.RoomEvery):
	}
	return false
}

// Paused is Room's error while the consumer waits for disk space, nil
// otherwise.
func (c *Consumer) Paused() error {
	if p := c.paused.Load(); p != nil {
		return *p
	}
	return nil
}

// keepAlive tells the server every AckWait/3 that msgs are still being
// worked on, until the returned func is called. A report that reaches the
// server after a message's ack is ignored: only pending messages have their
// ack wait restarted.
func (c *Consumer) keepAlive(msgs []jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(c.opts.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			for _, m := range msgs {
				// A failed report costs at worst a redelivery, which is
				// harmless: writes are idempotent.
				_ = m.InProgress()
			}
			c.opts.Metrics.inProgress.Add(float64(len(msgs)))
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// item is one decoded message of a batch.
type item struct {
	msg   jetstream.Msg
	event *lkv1.EntityEvent
	key   string
	seq   uint64 // stream sequence
}

// process handles one fetched batch. A write that fails for a full disk is
// tried again (every RoomEvery) until it passes or quit closes, the
// messages held meanwhile: their deliveries are not spent, so none goes to
// the dead letters for it.
func (c *Consumer) process(ctx context.Context, quit <-chan struct{}, msgs []jetstream.Msg) {
	m := c.opts.Metrics
	m.batchSize.Observe(float64(len(msgs)))
	items := make([]item, 0, len(msgs))
	for _, msg := range msgs {
		ev := &lkv1.EntityEvent{}
		if err := proto.Unmarshal(msg.Data(), ev); err != nil {
			c.deadLetter(ctx, msg, fmt.Errorf("decode entity event: %w", err))
			continue
		}
		key := ev.GetUpsert().GetKey()
		if ev.GetTombstone() != nil {
			key = ev.GetTombstone().GetKey()
		}
		if key == "" {
			c.deadLetter(ctx, msg, errors.New("entity event has no key"))
			continue
		}
		items = append(items, item{msg: msg, event: ev, key: key, seq: streamSeq(msg)})
	}
	if len(items) == 0 {
		return
	}
	err := c.write(ctx, items)
	for err != nil && DiskFull(err) {
		full := fmt.Errorf("disk full: %w; free some space: storing resumes by itself", err)
		if prev := c.paused.Swap(&full); prev == nil {
			c.opts.Logger.Error("not storing entities until disk space is freed: the stream keeps them meanwhile", "err", err)
		}
		select {
		case <-quit:
			return // unacknowledged: redelivered after the restart
		case <-time.After(c.opts.RoomEvery):
		}
		if err = c.write(ctx, items); err == nil && c.paused.Swap(nil) != nil {
			c.opts.Logger.Info("disk space is back: storing entities again")
		}
	}
	if err != nil {
		// Retry one by one, so that one bad entity does not hold back the
		// others, and the bad one is dead-lettered on its last delivery.
		c.opts.Logger.Warn("batch write failed; retrying its messages one by one", "messages", len(items), "err", err)
		for _, it := range items {
			if err := c.write(ctx, []item{it}); err != nil {
				c.retryOrDeadLetter(ctx, it.msg, err)
				continue
			}
			c.ack(it.msg)
		}
		return
	}
	for _, it := range items[:len(items)-1] {
		c.ack(it.msg)
	}
	c.ackLast(ctx, items[len(items)-1].msg)
}

// ackLast acknowledges a batch's last message. When nothing was left
// behind the batch on the stream as it was delivered, it waits for the
// server to confirm and has the lag read at once, not at watchLag's next
// tick, so that a node that has caught up says so then. The server takes a
// consumer's acks in order: once it has confirmed the last, the lag it
// reports counts them all.
func (c *Consumer) ackLast(ctx context.Context, msg jetstream.Msg) {
	if md, err := msg.Metadata(); err != nil || md.NumPending > 0 {
		c.ack(msg)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.AckWait)
	defer cancel()
	if err := msg.DoubleAck(ctx); err != nil {
		c.opts.Logger.Warn("ack failed; the message will be redelivered", "subject", msg.Subject(), "err", err)
		return
	}
	c.opts.Metrics.messages.WithLabelValues("stored").Inc()
	select {
	case c.lagNow <- struct{}{}:
	default: // a read is already asked for
	}
}

// write embeds the upserts that need it and applies every item durably.
// Within a batch the stream order holds: a later event for a key wins.
func (c *Consumer) write(ctx context.Context, items []item) error {
	info := c.model.Info()
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[it.key] = i
	}
	writes := make([]badgerstore.Write, 0, len(last))
	var texts []string
	var need []int // index into writes
	upserts := 0
	for i, it := range items {
		if last[it.key] != i {
			continue // superseded later in this batch
		}
		if t := it.event.GetTombstone(); t != nil {
			writes = append(writes, badgerstore.Write{DeleteKey: t.GetKey(), Sequence: it.seq})
			continue
		}
		e := it.event.GetUpsert()
		upserts++
		vec, ok, err := c.store.CachedVector(ctx, info.Name, e.GetContentHash())
		if err != nil {
			return fmt.Errorf("read embedding cache: %w", err)
		}
		writes = append(writes, badgerstore.Write{Entity: e, Vector: vec, Sequence: it.seq})
		if !ok {
			texts = append(texts, embedder.Text(e, info.Lowercase))
			need = append(need, len(writes)-1)
		}
	}
	if len(texts) > 0 {
		vecs, err := c.model.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed %d texts: %w", len(texts), err)
		}
		for j, wi := range need {
			writes[wi].Vector = vecs[j]
		}
	}
	c.opts.Metrics.cacheHits.Add(float64(upserts - len(texts)))
	if err := c.store.Apply(ctx, writes); err != nil {
		return fmt.Errorf("apply %d writes: %w", len(writes), err)
	}
	return nil
}

func (c *Consumer) ack(msg jetstream.Msg) {
	if err := msg.Ack(); err != nil {
		// The write is durable and idempotent: a redelivery is harmless.
		c.opts.Logger.Warn("ack failed; the message will be redelivered", "subject", msg.Subject(), "err", err)
	}
	c.opts.Metrics.messages.WithLabelValues("stored").Inc()
}

func (c *Consumer) retryOrDeadLetter(ctx context.Context, msg jetstream.Msg, cause error) {
	md, err := msg.Metadata()
	if err == nil && int(md.NumDelivered) >= c.opts.MaxDeliver {
		c.deadLetter(ctx, msg, cause)
		return
	}
	delivered := uint64(1)
	if md != nil {
		delivered = md.NumDelivered
	}
	c.opts.Logger.Warn("message failed; will retry", "subject", msg.Subject(), "delivery", delivered, "err", cause)
	c.opts.Metrics.messages.WithLabelValues("retried").Inc()
	if err := msg.NakWithDelay(time.Duration(delivered) * time.Second); err != nil {
		c.opts.Logger.Warn("nak failed", "err", err)
	}
}

// deadLetter publishes msg with its error to the dead-letter stream, then
// terminates it. If the publish fails the message is left for redelivery,
// so nothing is dropped silently.
func (c *Consumer) deadLetter(ctx context.Context, msg jetstream.Msg, cause error) {
	dl := &lkv1.DeadLetter{
		Subject:  msg.Subject(),
		Payload:  msg.Data(),
		Error:    cause.Error(),
		FailedAt: timestamppb.Now(),
	}
	if md, err := msg.Metadata(); err == nil {
		dl.StreamSequence = md.Sequence.Stream
		dl.Deliveries = uint32(md.NumDelivered)
	}
	data, err := proto.Marshal(dl)
	if err == nil {
		_, err = c.js.Publish(ctx, DeadLetterSubject+"."+msg.Subject(), data)
	}
	if err != nil {
		c.opts.Logger.Error("dead-letter publish failed; leaving the message for redelivery", "subject", msg.Subject(), "cause", cause, "err", err)
		_ = msg.NakWithDelay(5 * time.Second)
		return
	}
	c.opts.Logger.Error("message dead-lettered", "subject", msg.Subject(), "sequence", dl.StreamSequence, "err", cause)
	c.opts.Metrics.messages.WithLabelValues("dead_lettered").Inc()
	c.opts.Metrics.deadLetters.Inc()
	// The store records that it has seen this sequence: a node comparing
	// its store with the consumer's ack floor must not take a
	// dead-lettered last message for a lost write.
	if dl.StreamSequence > 0 {
		if err := c.store.Apply(ctx, []badgerstore.Write{{Sequence: dl.StreamSequence}}); err != nil {
			c.opts.Logger.Warn("could not record the dead-lettered message's sequence", "err", err)
		}
	}
	if err := msg.TermWithReason(cause.Error()); err != nil {
		c.opts.Logger.Warn("term failed", "err", err)
	}
}

// streamSeq is msg's stream sequence (0 when it has no metadata).
func streamSeq(msg jetstream.Msg) uint64 {
	if md, err := msg.Metadata(); err == nil {
		return md.Sequence.Stream
	}
	return 0
}

// watchLag publishes the consumer's pending count as a gauge, and calls
// lost when the server says the consumer or its stream does not exist.
func (c *Consumer) watchLag(ctx context.Context, cons jetstream.Consumer, lost context.CancelCauseFunc) {
	t := time.NewTicker(c.opts.LagEvery)
	defer t.Stop()
	for {
		info, err := cons.Info(ctx)
		switch {
		case err == nil:
			n := info.NumPending + uint64(info.NumAckPending)
			c.pending.Store(n)
			c.lagKnown.Store(true)
			c.opts.Metrics.pending.Set(float64(n))
		case errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound):
			c.lagKnown.Store(false)
			lost(fmt.Errorf("%w: %s: %w", ErrConsumerLost, c.opts.Durable, err))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.lagNow:
		}
	}
}

// Pending is the consumer's lag as last observed: messages on the stream
// this node has not yet stored and acknowledged.
func (c *Consumer) Pending() uint64 { return c.pending.Load() }

// Lag is Pending and whether it has been observed at all: before Run has
// asked the server once, a zero Pending says nothing.
func (c *Consumer) Lag() (pending uint64, known bool) {
	return c.pending.Load(), c.lagKnown.Load()
}

// ForgetLag forgets the lag last observed, until Run observes it again:
// for a replica about to replace its consumer, whose old lag says nothing
// of the new one's.
func (c *Consumer) ForgetLag() { c.lagKnown.Store(false) }

// entitySource lists stored entities, for re-embedding.
type entitySource interface {
	ForEach(ctx context.Context, fn func(*lkv1.Entity) error) error
}

// Reembed writes every entity of src again with a vector from the
// consumer's model (the embedding cache first, the model for the rest): what
// a node does when it starts with a different model than the one that made
// its vectors. progress, if not nil, is called after each batch.
func (c *Consumer) Reembed(ctx context.Context, src entitySource, progress func(done, total int)) error {
	// Collect first: writing while one read transaction spans the whole
	// store would keep every old version alive until the end.
	var entities []*lkv1.Entity
	if err := src.ForEach(ctx, func(e *lkv1.Entity) error {
		entities = append(entities, e)
		return nil
	}); err != nil {
		return fmt.Errorf("list stored entities: %w", err)
	}
	for start := 0; start < len(entities); start += c.opts.Batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+c.opts.Batch, len(entities))
		items := make([]item, 0, end-start)
		for _, e := range entities[start:end] {
			items = append(items, item{event: &lkv1.EntityEvent{Event: &lkv1.EntityEvent_Upsert{Upsert: e}}, key: e.GetKey()})
		}
		if err := c.write(ctx, items); err != nil {
			return fmt.Errorf("re-embed: %w", err)
		}
		if progress != nil {
			progress(end, len(entities))
		}
	}
	return nil
}

// DiskFull reports whether err is a write that failed for lack of disk
// space (Badger wraps the system's error in text at places).
func DiskFull(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "no space left on device"))
}

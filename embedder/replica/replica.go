// Package replica is a query node's copy of the catalogue: the embedding
// model, the vector index, the Badger store and the durable consumer that
// keeps them up to date with the ENTITIES stream. It owns their lifecycle:
// Open (model, index, store, re-embedding after a model change, consumer),
// Run (consume until stopped, draining the batch in flight), Ready and Close
// (in reverse order of opening). The query service reads its Store and
// Model; the command only composes.
//
// The stream is the source of truth. At Open a replica proves its store
// holds what the stream holds (badgerstore verifies its files; the
// replica compares the store's StreamMark with the stream and the durable
// consumer) and otherwise rebuilds it from the stream; while running it
// notices a lost consumer or stream and does the same. Until a rebuild is
// complete Ready says so.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/natsconsume"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorbundle"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
)

// IndexOpener opens the vector index a replica writes to. The embedded
// index is the default; the command passes one for Qdrant, whose client it
// owns and closes after the replica.
type IndexOpener func(ctx context.Context, opts *vectorindex.Options) (*vectorindex.Index, error)

// Options configure a replica. Every zero field means its default.
type Options struct {
	// ModelDir holds the ONNX Runtime library and the models (default
	// ".models").
	ModelDir string
	// Model is the embedding model's name (default "use-lite").
	Model string
	// OpenIndex opens the vector index (default: the embedded index).
	OpenIndex IndexOpener
	// Stream is the stream consumed (required by Open: ingest.StreamName).
	Stream string
	// Durable is the consumer's name: one per replica (default "embedder").
	Durable string
	// Replicas is the consumer's replica count on a clustered stream.
	Replicas int
	// MaxPending is how many stream messages may wait to be stored before
	// Ready reports the replica behind, once it has caught up with the
	// stream after opening (until then, one is too many); 0 means never.
	MaxPending uint64
	// ProgressEvery is how often Run logs progress while behind (default 5 s).
	ProgressEvery time.Duration
	// Retry, if set, runs the creation of the durable consumer (and the
	// dead-letter stream) until it succeeds or fails for good: a cluster
	// that is forming or has just lost a server refuses it for a while.
	// Default: one attempt.
	Retry func(ctx context.Context, what string, f func(context.Context) error) error
	// CaughtUp, if set, is called (from Run's progress reporter) the first
	// time the replica is found caught up with the stream, and each time
	// it catches up after being behind: the command returns the load's
	// garbage to the operating system then.
	CaughtUp func()
	// EnsureStream, if set, makes the stream (and what goes with it) when
	// a running replica finds it gone: a NATS server that lost its store
	// or an operator's mistake. Default: wait for another process to make
	// it.
	EnsureStream func(ctx context.Context) error
	// MinFree is the free disk space below which the replica stops storing
	// entities (they wait in the stream) until space is freed: Badger
	// writes through memory-mapped files, and a full disk crashes the
	// process with SIGBUS instead of failing a write. 0 disables the check.
	MinFree uint64
	// FreeSpace reports the free bytes on the filesystem holding dir
	// (default: the operating system's count; tests inject one).
	FreeSpace func(dir string) (uint64, error)
	// Bundle returns the vectors made ahead of time that the consumer
	// takes instead of embedding, when the model's checksum is theirs
	// (default: vectorbundle.Bundled, the binary's; tests inject others).
	Bundle func() (*vectorbundle.Bundle, error)
	// Registerer receives the model's, index's and consumer's metrics.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Replica is an open replica. Open it, Run it, Close it.
type Replica struct {
	store    *badgerstore.Store
	model    *onnx.Model
	consumer *natsconsume.Consumer
	jc       jetstream.Consumer
	opts     Options
	log      *slog.Logger
	closers  []func() error // in opening order; Close runs them backwards
	// caughtUp is set the first time nothing is left to store.
	caughtUp atomic.Bool
	js       jetstream.JetStream
	dir      string
	// rebuild is set while the store is being rebuilt from the stream.
	rebuild atomic.Pointer[rebuild]
	// bundle answers the consumer's texts the bundled vectors hold (nil:
	// none match the model).
	bundle *vectorbundle.Model
}

// Open opens the model, the vector index and the store in dir, re-embeds
// every stored entity when the model changed since the store was written,
// and creates (or binds to) the durable consumer. On error, whatever was
// opened is closed again.
func Open(ctx context.Context, js jetstream.JetStream, dir string, opts *Options) (_ *Replica, err error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.ModelDir == "" {
		o.ModelDir = ".models"
	}
	if o.Model == "" {
		o.Model = "use-lite"
	}
	if o.Durable == "" {
		o.Durable = "embedder"
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.Stream == "" {
		return nil, errors.New("replica: no stream to consume")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := o.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry() // metrics nobody reads
	}
	r := &Replica{opts: o, log: log, js: js, dir: dir}
	defer func() {
		if err != nil {
			if cerr := r.Close(context.WithoutCancel(ctx)); cerr != nil {
				log.Error("cleanup after a failed start", "err", cerr)
			}
		}
	}()

	r.model, err = onnx.Open(o.ModelDir, &onnx.Options{Model: o.Model, Logger: log, Metrics: onnx.NewMetrics(reg)})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, r.model.Close)
	info := r.model.Info()

	open := o.OpenIndex
	if open == nil {
		open = func(_ context.Context, opts *vectorindex.Options) (*vectorindex.Index, error) {
			return embeddedindex.Open(opts)
		}
	}
	idx, err := open(ctx, &vectorindex.Options{
		Dimensions: info.Dimensions,
		Model:      info.Name,
		Fields:     badgerstore.PayloadFields(),
		Metrics:    vectorindex.NewMetrics(reg),
		Logger:     log,
	})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, idx.Close)

	// A store whose vectors another model made is re-embedded before the
	// replica serves; its old vectors must not reach the new index meanwhile.
	// A damaged store is set aside and rebuilt from the stream, and what
	// the vector index holds of it (a backend that keeps its points, or a
	// partial load) goes with it.
	var damaged error
	setAside := func(err error) error {
		damaged = err
		if err := r.setAside(err); err != nil {
			return err
		}
		return clearIndex(ctx, idx)
	}
	verifyStart := time.Now()
	prev, err := badgerstore.RecordedModel(dir)
	if errors.Is(err, badgerstore.ErrDamaged) {
		if err := setAside(err); err != nil {
			return nil, err
		}
		prev = badgerstore.ModelInfo{}
	} else if err != nil {
		return nil, err
	}
	reembed := prev.Name != "" && (prev.Name != info.Name || prev.Dimensions != info.Dimensions)
	if damaged == nil {
		log.Info("store files verified", "dir", dir, "took", time.Since(verifyStart).Round(time.Millisecond))
	}
	sopts := &badgerstore.Options{
		Logger: log, Model: info.Name,
		// Qdrant keeps its points itself; the embedded index is reloaded.
		NoIndexReload: reembed || idx.Backend() != "embedded",
		// RecordedModel verified them; a store set aside is new.
		TablesVerified: true,
		// Listeners open at once; Ready says the index is loading
		// meanwhile, and damage the load finds is healed by Run.
		LoadInBackground: true,
	}
	openStart := time.Now()
	r.store, err = badgerstore.Open(dir, idx, sopts)
	if errors.Is(err, badgerstore.ErrDamaged) {
		if err := setAside(err); err != nil {
			return nil, err
		}
		r.store, err = badgerstore.Open(dir, idx, sopts)
	}
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, r.store.Close)
	log.Info("store opened; building its in-memory index in the background", "entities", r.store.Stats().Entities, "took", time.Since(openStart).Round(time.Millisecond))

	var embed natsconsume.Model = r.model
	if r.bundle = bundled(o.Bundle, r.model, log); r.bundle != nil {
		embed = r.bundle
	}
	// Asked before every batch: a full disk stops the writes before Badger
	// meets it.
	copts := &natsconsume.Options{Durable: o.Durable, Logger: log, Metrics: natsconsume.NewMetrics(reg), Room: r.room}
	r.consumer = natsconsume.New(js, r.store, embed, copts)
	if reembed {
		log.Info("the embedding model changed: re-embedding every stored entity", "from", prev.Name, "to", info.Name)
		start := time.Now()
		err := r.consumer.Reembed(ctx, r.store, func(done, total int) {
			log.Info("re-embedding", "done", done, "total", total)
		})
		if err != nil {
			return nil, err
		}
		log.Info("re-embedded", "took", time.Since(start).Round(time.Millisecond))
	}
	if err := r.store.SetModel(ctx, info); err != nil {
		return nil, err
	}
	ensure := func(ctx context.Context) error { return r.reconcile(ctx, damaged) }
	if o.Retry != nil {
		err = o.Retry(ctx, "the consumer "+o.Durable+" on "+o.Stream, ensure)
	} else {
		err = ensure(ctx)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// bundled is model answered from the bundle load returns, or nil when
// its vectors are not model's (or cannot be read): every text is then
// embedded.
func bundled(load func() (*vectorbundle.Bundle, error), model *onnx.Model, log *slog.Logger) *vectorbundle.Model {
	if load == nil {
		load = vectorbundle.Bundled
	}
	b, err := load()
	if err != nil {
		log.Warn("the bundled vectors cannot be read: every entity is embedded by the model", "err", err)
		return nil
	}
	info := model.Info()
	if ok, why := b.Matches(info.Name, model.Checksum()); !ok {
		log.Info(why+": every entity is embedded by the model", "model", info.Name)
		return nil
	}
	// The first decode is this one; after a Release, decode again.
	first := b
	return vectorbundle.NewModel(model, func() (*vectorbundle.Bundle, error) {
		if b := first; b != nil {
			first = nil
			return b, nil
		}
		return load()
	})
}

// Store is the replica's storage, for the query service to read.
func (r *Replica) Store() *badgerstore.Store { return r.store }

// Model is the embedding model, for the query service's query vectors.
func (r *Replica) Model() *onnx.Model { return r.model }

// Bundled reports whether the consumer takes the vectors the bundle
// holds (the model is the bundle's) rather than embedding every entity.
func (r *Replica) Bundled() bool { return r.bundle != nil }

// Embedded is how many texts the bundle did not hold and the model
// embedded for the consumer (homebrew); 0 without a bundle (Bundled).
func (r *Replica) Embedded() int64 {
	_, fromModel := r.bundleCounts()
	return fromModel
}

// bundleCounts is how many vectors the consumer took from the bundle and
// how many the model made for it (0, 0 without a bundle that matches).
func (r *Replica) bundleCounts() (fromBundle, fromModel int64) {
	if r.bundle == nil {
		return 0, 0
	}
	return r.bundle.Counts()
}

// Pending is how many stream messages wait to be stored.
func (r *Replica) Pending() uint64 { return r.consumer.Pending() }

// Run consumes the stream until ctx is done, logging progress while the
// replica is behind. It returns only after the batch in flight is stored
// and acknowledged, so Close may follow at once.
//
// When the consumer or its stream is found gone, Run makes the stream
// again (Options.EnsureStream), checks the store against it as Open does
// (a stream made again empties the store) and goes on with a new consumer.
func (r *Replica) Run(ctx context.Context) error {
	progressCtx, stop := context.WithCancel(ctx)
	defer stop()
	go r.reportProgress(progressCtx)
	for {
		err := r.runConsumer(ctx)
		if ctx.Err() != nil {
			return err
		}
		if damaged := r.loadDamaged(); damaged != nil {
			if err := r.replaceDamaged(ctx, damaged); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		if !errors.Is(err, natsconsume.ErrConsumerLost) {
			return err
		}
		r.log.Warn("the stream or this node's consumer is gone (deleted, or NATS lost its store): making them again and checking the store against the stream", "err", err)
		r.startRebuild("the consumer or the stream " + r.opts.Stream + " was lost")
		heal := func(ctx context.Context) error {
			if r.opts.EnsureStream != nil {
				if err := r.opts.EnsureStream(ctx); err != nil {
					return err
				}
			}
			return r.reconcile(ctx, nil)
		}
		if err := r.retry(ctx, "the stream "+r.opts.Stream+" and the consumer "+r.opts.Durable, heal); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// runConsumer runs the consumer until ctx ends, it returns, or the store's
// background load finds the store damaged (loadDamaged).
func (r *Replica) runConsumer(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.store.Loaded():
			if r.loadDamaged() != nil {
				cancel()
			}
		case <-runCtx.Done():
		}
	}()
	return r.consumer.Run(runCtx, r.jc)
}

// loadDamaged is the error of a background load that found the store
// damaged, nil otherwise.
func (r *Replica) loadDamaged() error {
	select {
	case <-r.store.Loaded():
	default:
		return nil
	}
	if err := r.store.LoadErr(); errors.Is(err, badgerstore.ErrDamaged) {
		return err
	}
	return nil
}

// replaceDamaged does what Open does with a store found damaged, for one
// whose damage the background load found: the store is set aside and
// replaced by an empty one, and rebuilt from the stream by a new consumer.
func (r *Replica) replaceDamaged(ctx context.Context, damaged error) error {
	// The old consumer's lag would end the rebuild before it began.
	r.consumer.ForgetLag()
	r.startRebuild("the store was damaged: " + damaged.Error())
	if err := r.store.ReplaceDamaged(ctx, func() error { return r.setAside(damaged) }); err != nil {
		return fmt.Errorf("replace the damaged store: %w", err)
	}
	return r.retry(ctx, "the consumer "+r.opts.Durable+" on "+r.opts.Stream, func(ctx context.Context) error {
		return r.reconcile(ctx, damaged)
	})
}

// retry runs f with Options.Retry, or every two seconds until it succeeds
// or ctx ends.
func (r *Replica) retry(ctx context.Context, what string, f func(context.Context) error) error {
	if r.opts.Retry != nil {
		return r.opts.Retry(ctx, what, f)
	}
	for {
		err := f(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		r.log.Warn("waiting for "+what, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// Ready reports whether the replica can answer from current data: the
// store is open, it has caught up with the stream since it opened (every
// message stored and acknowledged, including those a previous process
// received and never acknowledged, which come back when their ack wait
// ends), and it is no more than MaxPending messages behind since, so a
// balancer prefers a node that has caught up.
func (r *Replica) Ready(ctx context.Context) error {
	if err := r.store.Ready(ctx); err != nil {
		return err
	}
	// Said at once, not at the consumer's next batch.
	if err := r.room(); err != nil {
		return err
	}
	if err := r.consumer.Paused(); err != nil {
		return err
	}
	if rb := r.rebuild.Load(); rb != nil {
		n, known := r.lag()
		if rb := r.rebuild.Load(); rb != nil {
			if !known {
				return fmt.Errorf("rebuilding from the stream (%s): not yet in touch with it", rb.reason)
			}
			return fmt.Errorf("rebuilding from the stream (%s): %d entities stored, %d messages to go", rb.reason, r.store.Stats().Entities, n)
		}
	}
	limit := r.opts.MaxPending
	if limit == 0 {
		return nil
	}
	n, known := r.lag()
	switch {
	case !known:
		return errors.New("not yet in touch with the stream")
	case !r.caughtUp.Load():
		return fmt.Errorf("catching up with the stream: %d messages to store", n)
	case n > limit:
		return fmt.Errorf("%d messages behind the stream (more than %d)", n, limit)
	}
	return nil
}

// lag is the consumer's lag, noting the first time it is zero.
func (r *Replica) lag() (uint64, bool) {
	n, known := r.consumer.Lag()
	if known && n == 0 {
		r.caughtUp.Store(true)
		if rb := r.rebuild.Swap(nil); rb != nil {
			r.log.Info("rebuilt the store from the stream", "reason", rb.reason, "entities", r.store.Stats().Entities, "took", time.Since(rb.started).Round(time.Millisecond))
		}
	}
	return n, known
}

// Close closes the store, the index and the model, in that order. Call it
// after Run has returned. It keeps going after an error and returns them
// joined.
func (r *Replica) Close(context.Context) error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// reportProgress logs how far the replica is behind the stream while it
// catches up (the first load embeds every entity, about a minute on two
// cores), and once when it has caught up.
func (r *Replica) reportProgress(ctx context.Context) {
	t := time.NewTicker(r.opts.ProgressEvery)
	defer t.Stop()
	// While behind, the pages the load writes into the store's files
	// leave the resident set every second, not only once it has caught
	// up: a load that takes its vectors from the bundle writes the whole
	// store in seconds, and its files (70 MB of the bundled catalogue's)
	// came on top of the load's heap.
	release := time.NewTicker(time.Second)
	defer release.Stop()
	behind, notified := false, false
	var trimmedAt int64 // the model's count of embedded texts at the last Trim
	for {
		select {
		case <-ctx.Done():
			return
		case <-release.C:
			if n, _ := r.lag(); n > 0 {
				if err := r.store.ReleaseFilePages(); err != nil {
					r.log.Debug("could not release the store's file pages", "err", err)
				}
			}
			continue
		case <-t.C:
		}
		pending, known := r.lag()
		stored := r.store.Stats().Entities
		switch {
		case pending > 0:
			behind = true
			r.log.Info("storing and embedding entities", "stored", stored, "pending", pending)
		case behind || known && !notified:
			// CaughtUp first: it gives the load's heap back, and Trim
			// then builds its fresh session (the model loaded a second
			// time, for a moment) below the load's high-water mark instead
			// of on top of it.
			if r.opts.CaughtUp != nil {
				r.opts.CaughtUp()
			}
			// Queries read a few documents each: the files the load
			// wrote and compacted need not stay resident.
			if err := r.store.ReleaseFilePages(); err != nil {
				r.log.Debug("could not release the store's file pages", "err", err)
			}
			if r.bundle != nil {
				// Needed again only to rebuild the store.
				r.bundle.Release()
			}
			if behind {
				fromBundle, fromModel := r.bundleCounts()
				r.log.Info("caught up with the stream", "entities", stored, "bundled_vectors", fromBundle, "embedded", fromModel)
				// The work's largest batches grew the model's arena,
				// which it would keep; a query embeds one short text.
				// When the bundle gave every vector the arena never
				// grew, and a new session would only load the model
				// a second time for a moment.
				if fromModel > trimmedAt || r.bundle == nil {
					if err := r.model.Trim(); err != nil && !errors.Is(err, onnx.ErrClosed) {
						r.log.Warn("could not release the embedding model's working memory", "err", err)
					}
					trimmedAt = fromModel
				}
			}
			behind, notified = false, true
		}
	}
}

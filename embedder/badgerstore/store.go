// Package badgerstore owns LoreKeeper's storage layout: entity documents,
// vectors, the embedding cache and the model metadata, in one Badger
// directory, kept in step with a vector index, and the secondary indexes
// over them, kept in memory.
//
// Badger allows one process per directory, and that process (a query node)
// keeps an in-memory index over the stored entities, built at Open (or in
// the background after it, Options.LoadInBackground) and maintained by
// Apply: posting lists per (field, value), sorted numeric
// columns, names in order and BM25 term lists. Queries answer their filters
// from it and read from Badger only the entities they return. Vectors are
// kept in Badger and searched in the vector index (Options of Open), which
// Open reloads for a backend that lives in memory.
//
// Keys:
//
//	d/<entity key>                          Entity, protobuf
//	v/<entity key>                          vector, little-endian float32
//	c/<model>\x00<content hash>             embedding cache, little-endian float32
//	m/model                                 ModelInfo, JSON
//	m/last_write                            time of the last Apply, RFC 3339
//	m/stream                                StreamMark, JSON
package badgerstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/vectorindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Errors returned by the store, matched with errors.Is.
var (
	// ErrNotFound: no entity has the key.
	ErrNotFound = errors.New("badgerstore: not found")
	// ErrInvalidWrite: a Write with neither an entity nor a key to delete,
	// or an entity without a key.
	ErrInvalidWrite = errors.New("badgerstore: invalid write")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("badgerstore: closed")
	// ErrLoading: the store is building its in-memory index in the
	// background (Options.LoadInBackground); retry in a few seconds.
	ErrLoading = errors.New("badgerstore: the in-memory index is loading")
)

// ModelInfo records which embedding model made the stored vectors; it is
// the model's own embedder.ModelInfo.
type ModelInfo = embedder.ModelInfo

// Options configure a Store. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Model names the embedding model whose vectors Apply writes from now
	// on: the embedding cache is keyed by it. When the store has no model
	// recorded yet, it is recorded (SetModel records the full ModelInfo);
	// when another model is recorded, Open logs that the stored vectors
	// need re-embedding. Default: the recorded model.
	Model string
	// NoIndexReload skips loading the stored vectors into the vector index
	// at Open: for a backend that keeps its points itself (Qdrant).
	NoIndexReload bool
	// EntityCache is how many decoded entities views keep in memory, so a
	// popular entity is not read and decoded again. Default 4096; negative
	// disables.
	EntityCache int
	// InMemory runs Badger without a directory (tests, benchmarks).
	InMemory bool
	// TablesVerified skips the verification of the table files at Open:
	// the caller has just verified them (RecordedModel does).
	TablesVerified bool
	// LoadInBackground makes Open return as soon as Badger is open and the
	// store's entity count agrees with what it recorded, and builds the
	// in-memory index (and reloads the vector index) in the background,
	// so a restarting node opens its listeners at once. Until the index is
	// built, Ready returns an error wrapping ErrLoading that says how far
	// the load is, View waits for it a few seconds (within its context)
	// before returning that error, and Apply waits for it. Damage the load
	// finds (an entity that cannot be read) is ErrDamaged from Ready,
	// View, Apply and LoadErr: replace the store (ReplaceDamaged).
	LoadInBackground bool
	// ValueLogFileSize is the size of Badger's value-log files (tests set
	// it small to collect garbage from few values). Default 64 MiB.
	ValueLogFileSize int64
	// FreeSpace reports the free space of the filesystem holding a
	// directory: CollectValueLog rewrites nothing with less than a
	// value-log file free. Default: FreeSpace (tests fake a full disk).
	FreeSpace func(dir string) (uint64, error)
	Logger    *slog.Logger
}

// Write is one change Apply makes: an upsert of Entity with its Vector (nil
// when the entity has none yet), or, when Entity is nil, a delete of
// DeleteKey. Sequence is the stream sequence of the event it came from (0:
// none), recorded in the store's StreamMark; a Write with only a Sequence
// changes nothing else (an event the consumer handled without a write).
type Write struct {
	Entity    *lkv1.Entity
	Vector    []float32
	DeleteKey string
	Sequence  uint64
}

// Store is the storage of one node. It is safe for concurrent use.
type Store struct {
	// db is swapped only by ReplaceDamaged.
	db     atomic.Pointer[badger.DB]
	bopts  badger.Options
	dir    string
	idx    *vectorindex.Index
	logger *slog.Logger

	// loaded is closed once the in-memory index is built, or its load
	// ended without it; loadErr (guarded by mu) is then why. stored is how
	// many entities Badger held at Open, loading how many the load has
	// indexed so far; stopLoad asks a background load to stop.
	loaded   chan struct{}
	loadErr  error
	stored   int
	loading  atomic.Int64
	stopLoad atomic.Bool

	mu        sync.RWMutex
	mem       *memIndex
	writes    uint64 // batches applied; guarded by mu
	model     ModelInfo
	lastWrite time.Time
	mark      StreamMark
	closed    bool

	// gcMu is held while the value log is collected, and while Close and
	// ReplaceDamaged close Badger, so a collection never runs on a
	// closed database; gcClosed (guarded by it) says the store is closed.
	// gcCancel ends the periodic collection, which then closes gcDone.
	gcMu     sync.Mutex
	gcClosed bool
	gcCancel context.CancelFunc
	gcDone   chan struct{}
	// freeSpace is Options.FreeSpace; vlogFileSize Badger's value-log file size.
	freeSpace    func(string) (uint64, error)
	vlogFileSize int64

	reads atomic.Uint64 // entities read by views
	ents  *entityCache
	memo  memo
	// cacheModel keys the embedding cache when set (Options.Model).
	cacheModel string
}

// entityCache holds decoded entities by key. Entities in it are shared
// between responses and must not be modified. Apply drops the keys it
// writes, under the store's write lock, so no view sees a stale one.
type entityCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*lkv1.Entity
}

func (c *entityCache) get(key string) *lkv1.Entity {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *entityCache) put(key string, e *lkv1.Entity) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k := range c.m { // evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[key] = e
}

func (c *entityCache) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

func (c *entityCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

const (
	prefixDoc    = "d/"
	prefixVector = "v/"
	prefixCache  = "c/"
	keyModel     = "m/model"
	keyLastWrite = "m/last_write"
)

// memTableSize is Badger's memtable size.
const memTableSize = 8 << 20

// valueThreshold is the size above which Badger keeps a value in its value
// log and only the key and a pointer in its tables: documents, vectors and
// cached vectors, most of what the store holds. Memtables then fill with
// keys, and flushes and compactions move a fraction of the bytes they did
// with every value in the tables (Badger's default threshold, 1 MiB). up's
// first load of the bundled catalogue: 32.9-35.7 s instead of 36.3-39.9,
// 54-58 s of CPU instead of 60-67, 110-122 collections instead of 434-575
// (the table builders' buffers had held most of the heap the load's soft
// limit allows), peak 322-350 MiB instead of 354-360; the same catalogue
// with 40,000 homebrew entities loaded in 249 s instead of 307 and
// restarted in 3.1-3.6 s instead of 4.2-4.5 (fewer tables to verify). The
// files take more disk (the value log is not compressed): 87 MB instead of
// 66, 385 MB instead of 302.
const valueThreshold = 512

// valueLogFileSize is the size at which Badger starts a new value-log
// file. Only a file no longer written to can be garbage collected
// (CollectValueLog), so files are far smaller than Badger's default 1 GiB.
const valueLogFileSize = 64 << 20

// valueLogGCInterval is how often a store on disk looks for value-log files
// to collect: values replaced or deleted (a resync, a homebrew file edited)
// stay in the log until their file is rewritten.
const valueLogGCInterval = 10 * time.Minute

// Open opens (creating if needed) the store in dir, builds the in-memory
// index from it and loads the stored vectors into idx (nil: no vector
// index). The caller keeps ownership of idx.
func Open(dir string, idx *vectorindex.Index, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	bopts := badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil).WithNumVersionsToKeep(1).
		// The catalogue is tens of megabytes and queries read through the
		// in-memory index and entity cache, so Badger's defaults (a 256 MiB
		// block cache, five 64 MiB memtables) would only hold memory. A
		// memtable's arena is allocated whole (its size plus 15 % for the
		// largest batch): 8 MiB keeps that batch (1.2 MiB) above the value
		// threshold (1 MiB), so any single value still fits a transaction.
		// Compactions build their tables in memory, each builder starting
		// at twice the table size, several at once: two compactors and 1 MiB
		// tables (not four and 2 MiB) took up's first-load peak with the
		// whole catalogue from 401-416 MiB to 356 MiB, the load as fast.
		WithBlockCacheSize(32 << 20).WithMemTableSize(memTableSize).WithNumMemtables(2).
		WithNumCompactors(2).WithBaseTableSize(1 << 20).
		WithValueThreshold(valueThreshold).WithValueLogFileSize(valueLogFileSize)
	if opts.ValueLogFileSize > 0 {
		bopts = bopts.WithValueLogFileSize(opts.ValueLogFileSize)
	}
	if opts.InMemory {
		bopts = badger.DefaultOptions("").WithInMemory(true).WithLogger(nil)
	}
	db, err := openBadger(bopts, !opts.InMemory && !opts.TablesVerified, logger)
	if err != nil {
		return nil, fmt.Errorf("open badger in %q: %w", dir, err)
	}
	s := &Store{bopts: bopts, dir: dir, idx: idx, logger: logger, mem: newMemIndex(), loaded: make(chan struct{})}
	s.db.Store(db)
	if n := opts.EntityCache; n >= 0 {
		if n == 0 {
			n = 4096
		}
		s.ents = &entityCache{max: n, m: make(map[string]*lkv1.Entity, n)}
	}
	if err := s.check(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.dropLegacyKeys(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if opts.LoadInBackground {
		go s.loadInBackground(opts)
	} else {
		err := s.load(opts)
		close(s.loaded)
		if err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if opts.Model != "" {
		s.cacheModel = opts.Model
		switch s.model.Name {
		case opts.Model:
		case "":
			if err := s.SetModel(context.Background(), ModelInfo{Name: opts.Model}); err != nil {
				_ = db.Close()
				return nil, err
			}
		default:
			logger.Warn("stored vectors were made by another model; re-embed them", "stored", s.model.Name, "model", opts.Model)
		}
	}
	gcCtx, cancel := context.WithCancel(context.Background())
	s.gcCancel, s.gcDone = cancel, make(chan struct{})
	s.freeSpace, s.vlogFileSize = opts.FreeSpace, bopts.ValueLogFileSize
	if s.freeSpace == nil {
		s.freeSpace = FreeSpace
	}
	if opts.InMemory {
		close(s.gcDone) // no value log to collect
	} else {
		go s.collectValueLogEvery(gcCtx, valueLogGCInterval)
		if err := s.KeepReserve(); err != nil {
			// It serves what it holds; writers ask KeepReserve first.
			logger.Warn("the store cannot keep room for its next memtable", "err", err)
		}
	}
	return s, nil
}

// legacyPrefixes hold keys that versions before the in-memory index wrote
// and nothing reads any more: an entry per entity and filter value
// (i/<field>\x00<value>\x00<key>, n/<field>\x00<number><key>), a dozen
// or more per entity. Without them up's first load of the whole catalogue
// took 41-43 s instead of 47-52 (66-73 s of CPU instead of 82-92), its
// peak 341-346 MiB instead of 366-413: Badger flushed and compacted less,
// and its table builders held less of the heap the collector works in.
var legacyPrefixes = [][]byte{[]byte("i/"), []byte("n/")}

// dropLegacyKeys removes the keys under legacyPrefixes from a store an
// older version wrote.
func (s *Store) dropLegacyKeys() error {
	found := false
	err := s.db.Load().View(func(txn *badger.Txn) error {
		for _, p := range legacyPrefixes {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
			it.Rewind()
			found = found || it.Valid()
			it.Close()
		}
		return nil
	})
	if err != nil || !found {
		return err
	}
	if err := s.db.Load().DropPrefix(legacyPrefixes...); err != nil {
		return fmt.Errorf("drop the index keys an older version stored: %w", err)
	}
	s.logger.Info("dropped the index keys an older version stored in Badger; the in-memory index replaces them")
	return nil
}

// check reads the store's metadata and counts its entities (their keys
// alone, not their values) against the count it recorded
// with its last write: fewer or more is ErrDamaged, found before the store
// serves or is reconciled with the stream.
func (s *Store) check() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading it panicked: %s", ErrDamaged, firstLine(fmt.Sprint(r)))
		}
	}()
	err = s.db.Load().View(func(txn *badger.Txn) error {
		if it, err := txn.Get([]byte(keyModel)); err == nil {
			if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &s.model) }); err != nil {
				return fmt.Errorf("read model metadata: %w", err)
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("read model metadata: %w", err)
		}
		if it, err := txn.Get([]byte(keyStream)); err == nil {
			if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &s.mark) }); err != nil {
				return fmt.Errorf("%w: read stream mark: %v", ErrDamaged, err)
			}
			s.mark.Recorded = true
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("read stream mark: %w", err)
		}
		if it, err := txn.Get([]byte(keyLastWrite)); err == nil {
			_ = it.Value(func(v []byte) error {
				s.lastWrite, _ = time.Parse(time.RFC3339Nano, string(v))
				return nil
			})
		}
		iopts := badger.DefaultIteratorOptions
		iopts.Prefix = []byte(prefixDoc)
		iopts.PrefetchValues = false
		it := txn.NewIterator(iopts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			s.stored++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load store: %w", err)
	}
	if s.mark.Recorded && s.mark.Entities != s.stored {
		return fmt.Errorf("%w: %s holds %d entities, but recorded %d after its last write", ErrDamaged, s.dir, s.stored, s.mark.Entities)
	}
	return nil
}

// loadInBackground runs load and records how it ended.
func (s *Store) loadInBackground(opts *Options) {
	start := time.Now()
	err := s.load(opts)
	s.mu.Lock()
	switch {
	case s.stopLoad.Load():
		s.loadErr = errLoadStopped
	case err != nil:
		s.loadErr = err
		s.logger.Error("building the in-memory index failed; the store cannot serve", "err", err)
	default:
		s.logger.Info("in-memory index built", "entities", s.loading.Load(), "took", time.Since(start).Round(time.Millisecond))
	}
	s.mu.Unlock()
	close(s.loaded)
}

// errLoadStopped: Close or Reset stopped a background load.
var errLoadStopped = errors.New("badgerstore: the load was stopped")

// Loaded is closed once a background load has ended (Options.
// LoadInBackground); LoadErr then says whether the index was built.
func (s *Store) Loaded() <-chan struct{} { return s.loaded }

// LoadErr is why the in-memory index could not be built (wrapping
// ErrDamaged when the load found the store damaged), nil once it is built
// or while it is being built.
func (s *Store) LoadErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.loadErr
}

// loadState is nil once the in-memory index is built, else an error
// wrapping ErrLoading with how far the load is, or why it failed.
func (s *Store) loadState() error {
	select {
	case <-s.loaded:
		if err := s.LoadErr(); err != nil {
			return fmt.Errorf("the in-memory index could not be built: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("%w (%d of %d entities so far); retry in a few seconds", ErrLoading, s.loading.Load(), s.stored)
	}
}

// Ready reports whether the store can serve: open, and Badger usable.
func (s *Store) Ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	closed := s.closed || s.db.Load().IsClosed()
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return s.loadState()
}

// stopLoading stops a background load of the in-memory index, if one is
// running, and waits for it to end.
func (s *Store) stopLoading() {
	s.stopLoad.Store(true)
	<-s.loaded
}

// Close closes Badger. It does not close the vector index.
func (s *Store) Close() error {
	// A background load reads Badger: stop it first.
	s.stopLoading()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.gcCancel()
	<-s.gcDone
	s.gcMu.Lock()
	s.gcClosed = true
	s.gcMu.Unlock()
	if err := s.db.Load().Close(); err != nil {
		return fmt.Errorf("close badger: %w", err)
	}
	return nil
}

// Apply makes writes durable: documents, secondary indexes, vectors and
// embedding-cache entries in Badger transactions committed with sync, then
// the vector index, then the in-memory index. It is idempotent: applying
// the same writes again changes nothing.
func (s *Store) Apply(ctx context.Context, writes []Write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, w := range writes {
		if w.Entity == nil && w.DeleteKey == "" && w.Sequence == 0 || w.Entity != nil && w.Entity.GetKey() == "" {
			return fmt.Errorf("write %d: %w", i, ErrInvalidWrite)
		}
	}
	// Writes wait for the index to be built: they change it.
	select {
	case <-s.loaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := s.loadState(); err != nil {
		return err
	}
	mark := s.Mark()
	for _, w := range writes {
		mark.Sequence = max(mark.Sequence, w.Sequence)
	}
	s.mu.RLock()
	closed, model := s.closed, s.model.Name
	entities := len(s.mem.bySlot)
	s.mu.RUnlock()
	if s.cacheModel != "" {
		model = s.cacheModel
	}
	if closed {
		return ErrClosed
	}
	now := time.Now().UTC()
	txn := s.db.Load().NewTransaction(true)
	defer func() { txn.Discard() }()
	// set retries once in a fresh transaction when this one is full; each
	// entity's writes are idempotent, so a split batch is still correct.
	set := func(op func(*badger.Txn) error) error {
		err := op(txn)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err := txn.Commit(); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			txn = s.db.Load().NewTransaction(true)
			err = op(txn)
		}
		return err
	}
	for _, w := range writes {
		key := w.DeleteKey
		if w.Entity != nil {
			key = w.Entity.GetKey()
		}
		if key == "" {
			continue // a Sequence alone
		}
		existed, err := s.removeKeys(txn, set, key)
		if err != nil {
			return err
		}
		if existed {
			entities--
		}
		if w.Entity == nil {
			continue
		}
		entities++
		doc, err := proto.Marshal(w.Entity)
		if err != nil {
			return fmt.Errorf("marshal entity %q: %w", key, err)
		}
		if err := set(func(t *badger.Txn) error { return t.Set([]byte(prefixDoc+key), doc) }); err != nil {
			return fmt.Errorf("write entity %q: %w", key, err)
		}
		if len(w.Vector) > 0 {
			vb := encodeVector(w.Vector)
			if err := set(func(t *badger.Txn) error { return t.Set([]byte(prefixVector+key), vb) }); err != nil {
				return fmt.Errorf("write vector of %q: %w", key, err)
			}
			if h := w.Entity.GetContentHash(); h != "" {
				if err := set(func(t *badger.Txn) error { return t.Set([]byte(cacheKey(model, h)), vb) }); err != nil {
					return fmt.Errorf("write embedding cache of %q: %w", key, err)
				}
			}
		}
	}
	if err := set(func(t *badger.Txn) error {
		return t.Set([]byte(keyLastWrite), []byte(now.Format(time.RFC3339Nano)))
	}); err != nil {
		return fmt.Errorf("write last-write time: %w", err)
	}
	// The mark goes in the last transaction: a crash between the commits
	// of a split batch leaves a count that no longer matches, and the
	// store is rebuilt rather than trusted.
	mark.Entities, mark.Recorded = entities, true
	mb, err := json.Marshal(mark)
	if err != nil {
		return fmt.Errorf("encode stream mark: %w", err)
	}
	if err := set(func(t *badger.Txn) error { return t.Set([]byte(keyStream), mb) }); err != nil {
		return fmt.Errorf("write stream mark: %w", err)
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}

	// Badger holds the truth now; a vector index failure is returned after
	// the in-memory index is updated, and the caller's retry (writes are
	// idempotent) brings the vector index in step.
	var idxErr error
	if s.idx != nil {
		var points []vectorindex.Point
		var deletes []string
		seen := map[string]int{}
		for _, w := range writes {
			if w.Entity != nil && len(w.Vector) > 0 {
				p := vectorindex.Point{ID: w.Entity.GetKey(), Vector: w.Vector, Payload: payload(w.Entity)}
				if i, ok := seen[p.ID]; ok {
					points[i] = p
					continue
				}
				seen[p.ID] = len(points)
				points = append(points, p)
			} else if w.Entity != nil || w.DeleteKey != "" {
				key := w.DeleteKey
				if w.Entity != nil {
					key = w.Entity.GetKey()
				}
				deletes = append(deletes, key)
			}
		}
		if len(deletes) > 0 {
			if err := s.idx.Delete(ctx, deletes); err != nil {
				idxErr = fmt.Errorf("delete from the vector index: %w", err)
			}
		}
		if len(points) > 0 && idxErr == nil {
			if err := s.idx.Upsert(ctx, points); err != nil {
				idxErr = fmt.Errorf("upsert into the vector index: %w", err)
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range writes {
		if w.Entity == nil && w.DeleteKey == "" {
			continue
		}
		if w.Entity == nil {
			s.mem.remove(w.DeleteKey)
			s.ents.drop(w.DeleteKey)
			continue
		}
		s.mem.put(w.Entity, w.Vector)
		s.ents.drop(w.Entity.GetKey())
	}
	s.memo.clear()
	s.writes++
	s.lastWrite = now
	s.mark = mark
	return idxErr
}

// removeKeys deletes what is stored under key: its document and vector
// (the embedding cache stays). It reports whether key was stored.
func (s *Store) removeKeys(txn *badger.Txn, set func(func(*badger.Txn) error) error, key string) (bool, error) {
	_, err := txn.Get([]byte(prefixDoc + key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read entity %q: %w", key, err)
	}
	for _, k := range [][]byte{[]byte(prefixDoc + key), []byte(prefixVector + key)} {
		if err := set(func(t *badger.Txn) error { return t.Delete(k) }); err != nil {
			return false, fmt.Errorf("delete %q: %w", k, err)
		}
	}
	return true, nil
}

func cacheKey(model, hash string) string { return prefixCache + model + "\x00" + hash }

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func getVector(txn *badger.Txn, key string) ([]float32, error) {
	item, err := txn.Get([]byte(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", key, err)
	}
	var v []float32
	err = item.Value(func(b []byte) error {
		v = decodeVector(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", key, err)
	}
	return v, nil
}

// CachedVector returns the vector model made for content with contentHash,
// if it was stored before: unchanged content is never embedded twice.
func (s *Store) CachedVector(ctx context.Context, model, contentHash string) ([]float32, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if contentHash == "" {
		return nil, false, nil
	}
	var v []float32
	err := s.db.Load().View(func(txn *badger.Txn) error {
		var err error
		v, err = getVector(txn, cacheKey(model, contentHash))
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("read embedding cache: %w", err)
	}
	return v, v != nil, nil
}

// Model returns the model that made the stored vectors (zero if none yet).
func (s *Store) Model() ModelInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.model
}

// SetModel records the model that makes the vectors from now on. Call it
// before re-embedding with a new model.
func (s *Store) SetModel(ctx context.Context, m ModelInfo) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("marshal model metadata: %w", err)
	}
	if err := s.db.Load().Update(func(txn *badger.Txn) error { return txn.Set([]byte(keyModel), b) }); err != nil {
		return fmt.Errorf("write model metadata: %w", err)
	}
	s.mu.Lock()
	s.model = m
	s.mu.Unlock()
	return nil
}

// Get returns the entity stored under key, or ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (*lkv1.Entity, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e := &lkv1.Entity{}
	err := s.db.Load().View(func(txn *badger.Txn) error { return readEntity(txn, key, e) })
	if err != nil {
		return nil, err
	}
	return e, nil
}

func readEntity(txn *badger.Txn, key string, e *lkv1.Entity) error {
	item, err := txn.Get([]byte(prefixDoc + key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return fmt.Errorf("entity %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read entity %q: %w", key, err)
	}
	if err := item.Value(func(v []byte) error { return proto.Unmarshal(v, e) }); err != nil {
		return fmt.Errorf("read entity %q: %w", key, err)
	}
	return nil
}

// ForEach calls fn with every stored entity, in key order, until fn returns
// an error (returned) or ctx ends: for re-embedding after a model change.
func (s *Store) ForEach(ctx context.Context, fn func(*lkv1.Entity) error) error {
	return s.db.Load().View(func(txn *badger.Txn) error {
		iopts := badger.DefaultIteratorOptions
		iopts.Prefix = []byte(prefixDoc)
		it := txn.NewIterator(iopts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			e := &lkv1.Entity{}
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, e) }); err != nil {
				return fmt.Errorf("read entity %q: %w", it.Item().Key(), err)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// Stats are the store's counts.
type Stats struct {
	Entities int
	Vectors  int
	// Kind slug -> entities.
	Kinds     map[string]int
	LastWrite time.Time
	// EntityReads counts the entities views have read from Badger: a query
	// reads only those it returns.
	EntityReads uint64
}

// Stats returns the counts of what is stored. While a background load
// builds the in-memory index, Entities is how many Badger held at Open
// and the other counts are zero.
func (s *Store) Stats() Stats {
	loading := s.loadState() != nil
	s.mu.RLock()
	defer s.mu.RUnlock()
	entities := len(s.mem.bySlot)
	if loading {
		entities = s.stored
	}
	st := Stats{Entities: entities, Vectors: s.mem.vectors, Kinds: map[string]int{}, LastWrite: s.lastWrite, EntityReads: s.reads.Load()}
	for k, n := range s.mem.kinds {
		st.Kinds[k.Slug()] = n
	}
	return st
}

// VectorIndex returns the vector index the store keeps in step (nil if
// none).
func (s *Store) VectorIndex() *vectorindex.Index { return s.idx }

// PayloadFields is the payload schema of the vector index points the
// store writes: pass it as vectorindex.Options.Fields.
func PayloadFields() []vectorindex.FieldSchema {
	kw := []string{FieldKind, FieldDocument, FieldSource, FieldGameSystem, FieldSchool, FieldClass,
		FieldCastingTime, FieldDamageType, FieldSavingThrow, FieldCreatureType, FieldSize,
		FieldDamageImmunity, FieldDamageResistance, FieldDamageVulnerability, FieldRarity,
		FieldDamageDice, FieldProperty, FieldArmorCategory, FieldCategory, FieldParent, FieldSection}
	num := []string{FieldLevel, FieldCR, FieldArmorClass, FieldHitPoints, FieldCost, FieldWeight,
		fieldAbilityStrength, fieldAbilityDexterity, fieldAbilityConstitution,
		fieldAbilityIntelligence, fieldAbilityWisdom, fieldAbilityCharisma}
	bl := []string{FieldConcentration, FieldRitual, FieldVerbal, FieldSomatic, FieldMaterial,
		FieldLegendary, FieldAttunement, FieldMagic, FieldSimple, FieldStealthDisadvantage, FieldRanged}
	var out []vectorindex.FieldSchema
	for _, f := range kw {
		out = append(out, vectorindex.FieldSchema{Name: f, Type: vectorindex.FieldKeyword})
	}
	for _, f := range num {
		out = append(out, vectorindex.FieldSchema{Name: f, Type: vectorindex.FieldNumber})
	}
	for _, f := range bl {
		out = append(out, vectorindex.FieldSchema{Name: f, Type: vectorindex.FieldBool})
	}
	return out
}

// payload is e's filter fields for the vector index, without those
// matched in memory alone (inMemoryOnly).
func payload(e *lkv1.Entity) vectorindex.Payload { return payloadOf(EntityFields(e)) }

// inMemoryOnly are the fields matched in memory, never in the vector index.
var inMemoryOnly = map[string]bool{FieldName: true, FieldSlug: true, FieldKey: true, FieldSourceKey: true,
	FieldFeature: true, FieldMovement: true, FieldHealing: true, FieldDamageDealt: true,
	FieldConditionInflicted: true, FieldConditionEnded: true, FieldProtection: true, FieldEffect: true, FieldRuleCategory: true}

// payloadOf is payload from e's fields, which it leaves as they are (the
// index copies what it keeps).
func payloadOf(f Fields) vectorindex.Payload {
	return vectorindex.Payload{Keywords: indexed(f.Keywords), Numbers: f.Numbers, Bools: indexed(f.Bools)}
}

// indexed is m without the fields matched in memory alone.
func indexed[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		if !inMemoryOnly[k] {
			out[k] = v
		}
	}
	return out
}

// RecordedModel returns the model recorded in the store at dir (zero when
// there is no store yet or no model recorded), without loading the store: a
// node reads it to decide whether its vectors must be re-embedded before it
// opens the store for real. It verifies the store's tables as Open does
// (ErrDamaged), so that Open may skip it (Options.TablesVerified).
func RecordedModel(dir string) (ModelInfo, error) {
	var m ModelInfo
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	db, err := openBadger(badger.DefaultOptions(dir).WithLogger(nil), true, slog.New(slog.DiscardHandler))
	if err != nil {
		return m, fmt.Errorf("open store %s: %w", dir, err)
	}
	defer db.Close()
	err = db.View(func(txn *badger.Txn) error {
		it, err := txn.Get([]byte(keyModel))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return json.Unmarshal(v, &m) })
	})
	if err != nil {
		return m, fmt.Errorf("read model metadata: %w", err)
	}
	return m, nil
}

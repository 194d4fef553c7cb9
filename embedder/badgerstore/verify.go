// What a store records of the stream it was written from, and the checks
// Open makes before it trusts its files: the stream is the source of truth,
// so a store that cannot prove it holds what it recorded is rebuilt from the
// stream rather than served.

package badgerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
)

// ErrDamaged reports that the store's files are damaged or inconsistent (a checksum
// mismatch, a truncated or unreadable table, fewer entities than it
// recorded, Badger refusing or panicking on open). Its content cannot be
// trusted: rebuild it from the stream.
var ErrDamaged = errors.New("badgerstore: store damaged")

const keyStream = "m/stream"

// StreamMark is what a store records of the stream its entities came
// from, in the transaction of every Apply: a node compares it with the
// stream (and its durable consumer) when it opens.
type StreamMark struct {
	// Created is the stream's creation time: a stream deleted and made
	// again (or a NATS server that lost its store) has another.
	Created time.Time `json:"created"`
	// Sequence is the highest stream sequence applied (Write.Sequence).
	Sequence uint64 `json:"sequence"`
	// Entities is how many entities the store held after that Apply.
	Entities int `json:"entities"`
	// Recorded is false when the store has no mark (a new store, or one
	// written before marks were recorded).
	Recorded bool `json:"-"`
}

// Mark returns what the store recorded of the stream.
func (s *Store) Mark() StreamMark {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mark
}

// SetMark records m as what the store holds of the stream: for a node
// adopting a store whose mark is missing or whose stream was made again.
func (s *Store) SetMark(ctx context.Context, m StreamMark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode stream mark: %w", err)
	}
	if err := s.db.Load().Update(func(txn *badger.Txn) error { return txn.Set([]byte(keyStream), b) }); err != nil {
		return fmt.Errorf("write stream mark: %w", err)
	}
	m.Recorded = true
	s.mu.Lock()
	s.mark = m
	s.mu.Unlock()
	return nil
}

// Reset deletes every entity and its vector (in Badger, the in-memory
// index and the vector index), and records m: what a node does before it replays
// a stream that no longer matches its store. The embedding cache and the
// model stay, so the replay embeds nothing it embedded before. A
// background load in progress is stopped: there is nothing left to load.
func (s *Store) Reset(ctx context.Context, m StreamMark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.loaded:
	default:
		s.stopLoading()
		s.stopLoad.Store(false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	keys := make([]string, 0, len(s.mem.bySlot))
	for k := range s.mem.bySlot {
		keys = append(keys, k)
	}
	if err := s.db.Load().DropPrefix([]byte(prefixDoc), []byte(prefixVector)); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	if err := s.emptyVectorIndex(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	for _, k := range keys {
		s.ents.drop(k)
	}
	s.mem = newMemIndex()
	s.mem.finish()
	s.memo.clear()
	s.writes++
	s.stored, s.loadErr = 0, nil
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode stream mark: %w", err)
	}
	if err := s.db.Load().Update(func(txn *badger.Txn) error { return txn.Set([]byte(keyStream), b) }); err != nil {
		return fmt.Errorf("write stream mark: %w", err)
	}
	m.Recorded = true
	s.mark = m
	return nil
}

// ReplaceDamaged replaces a store found damaged after Open (LoadErr wraps
// ErrDamaged) with an empty one, under the same *Store so that its readers
// keep it: it stops a load in progress, closes Badger, calls setAside to
// move or delete the directory, opens an empty store in its place with the
// same model recorded, and empties the vector index. The caller then
// rebuilds the store from the stream.
func (s *Store) ReplaceDamaged(ctx context.Context, setAside func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.stopLoading()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	if err := s.db.Load().Close(); err != nil {
		s.logger.Warn("closing the damaged store", "err", err)
	}
	s.closed = true // until the new one is open
	if err := setAside(); err != nil {
		return err
	}
	db, err := openBadger(s.bopts, false, s.logger)
	if err != nil {
		return fmt.Errorf("open badger in %q: %w", s.dir, err)
	}
	s.db.Store(db)
	s.closed = false
	s.ents.clear()
	s.mem = newMemIndex()
	s.mem.finish()
	s.memo.clear()
	s.writes++
	s.mark, s.stored, s.loadErr = StreamMark{}, 0, nil
	s.loading.Store(0)
	s.stopLoad.Store(false)
	if s.model.Name != "" {
		b, err := json.Marshal(s.model)
		if err != nil {
			return fmt.Errorf("marshal model metadata: %w", err)
		}
		if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(keyModel), b) }); err != nil {
			return fmt.Errorf("write model metadata: %w", err)
		}
	}
	return s.emptyVectorIndex(ctx)
}

// emptyVectorIndex deletes every point of the vector index, if any.
func (s *Store) emptyVectorIndex(ctx context.Context) error {
	if s.idx == nil {
		return nil
	}
	ids, err := s.idx.IDs(ctx, nil)
	if err != nil {
		return fmt.Errorf("empty the vector index: %w", err)
	}
	if err := s.idx.Delete(ctx, ids); err != nil {
		return fmt.Errorf("empty the vector index: %w", err)
	}
	return nil
}

// verifyTables opens every table file in dir as Badger would and verifies
// its checksums: a damaged table makes Badger panic in a goroutine of its
// own when it opens the directory (beyond recovery), and a flipped bit in
// a block would end the load's iteration early without an error, so a
// store would serve part of its entities. Reading the tables costs about
// what reading them from disk does (tens of milliseconds for the bundled
// catalogue's 40 MB), and leaves them in the page cache for the load.
func verifyTables(dir string, log *slog.Logger) error {
	start := time.Now()
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); errors.Is(err, os.ErrNotExist) && len(files) > 0 {
		// Badger would start afresh and delete every table it finds.
		return fmt.Errorf("its MANIFEST is missing (%d table files without it)", len(files))
	}
	var size int64
	def := badger.DefaultOptions("")
	topts := table.Options{
		ReadOnly: true, ChkMode: options.OnTableRead, BlockSize: def.BlockSize,
		BloomFalsePositive: def.BloomFalsePositive, Compression: def.Compression,
		ZSTDCompressionLevel: def.ZSTDCompressionLevel,
	}
	for _, f := range files {
		n, err := verifyTable(f, topts)
		if err != nil {
			return fmt.Errorf("table %s: %w", filepath.Base(f), err)
		}
		size += n
	}
	log.Info("store tables verified", "dir", dir, "tables", len(files), "bytes", size, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func verifyTable(path string, topts table.Options) (size int64, err error) {
	// Read whole rather than mapped: the table is only read, and Badger's
	// own mapping is closed through the table (DecrRef deletes the file).
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	size = int64(len(data))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("truncated or damaged: Badger panicked reading it (%s)", firstLine(fmt.Sprint(r)))
		}
	}()
	t, err := table.OpenInMemoryTable(data, 0, &topts)
	if err != nil {
		return size, err
	}
	return size, t.VerifyChecksum()
}

// firstLine is the first non-empty line of a panic's message (Badger's
// carry a dump after it).
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "==") {
			return l
		}
	}
	return s
}

// openBadger opens Badger in dir, verifying its tables first; a damaged
// table, a panic and any refusal but a lock or a permission are ErrDamaged.
func openBadger(bopts badger.Options, verify bool, log *slog.Logger) (db *badger.DB, err error) {
	dir := bopts.Dir
	if verify {
		if err := verifyTables(dir, log); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: badger panicked on open: %s", ErrDamaged, firstLine(fmt.Sprint(r)))
		}
	}()
	db, err = badger.Open(bopts)
	if err == nil {
		return db, nil
	}
	if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "Cannot acquire directory lock") {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
}

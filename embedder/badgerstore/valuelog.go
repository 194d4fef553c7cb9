package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// valueLogDiscardRatio is the share of a value-log file that must be
// garbage before CollectValueLog rewrites it: Badger's own suggestion,
// rewriting a file costs reading it whole and writing what is still live.
const valueLogDiscardRatio = 0.5

// CollectValueLog rewrites, one at a time, the value-log files that are at
// least half garbage (values replaced or deleted since they were written,
// as compactions have found), and returns how many it rewrote. Badger
// frees a value-log file's space only this way. A rewrite writes through a
// memory map, where a full disk kills the process: with less than a
// value-log file free, nothing is rewritten and the error says so. A store
// in memory has nothing to collect.
func (s *Store) CollectValueLog(ctx context.Context) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		s.gcMu.Lock()
		db := s.db.Load()
		if s.gcClosed || db.IsClosed() {
			// Closed, or left closed by a ReplaceDamaged that failed.
			s.gcMu.Unlock()
			return n, ErrClosed
		}
		if free, err := s.freeSpace(s.dir); err == nil && free < uint64(s.vlogFileSize) {
			s.gcMu.Unlock()
			return n, fmt.Errorf("collect the value log: %.1f MiB free on the filesystem of %s, less than a value-log file (%d MiB): free some space",
				float64(free)/(1<<20), s.dir, s.vlogFileSize>>20)
		}
		err := badger.ErrNoRewrite
		if !db.Opts().InMemory {
			err = db.RunValueLogGC(valueLogDiscardRatio)
		}
		s.gcMu.Unlock()
		switch {
		case errors.Is(err, badger.ErrNoRewrite), errors.Is(err, badger.ErrRejected):
			// Nothing (more) to rewrite, or a collection already running.
			return n, nil
		case err != nil:
			return n, fmt.Errorf("collect the value log: %w", err)
		}
		n++
	}
}

// collectValueLogEvery runs CollectValueLog every interval until ctx ends
// (Close), then closes gcDone.
func (s *Store) collectValueLogEvery(ctx context.Context, interval time.Duration) {
	defer close(s.gcDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			start := time.Now()
			n, err := s.CollectValueLog(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				s.logger.Warn("value-log collection failed; the store keeps its garbage until the next try", "err", err)
			case n > 0:
				s.logger.Info("value log collected", "files", n, "took", time.Since(start).Round(time.Millisecond))
			}
		}
	}
}

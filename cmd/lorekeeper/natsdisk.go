package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"lorekeeper.dev/embedder/badgerstore"
)

// natsDisk watches the embedded NATS server's store for a full disk. A
// JetStream stream that once failed a write for lack of space keeps
// failing every write until it is loaded again (the object store kept
// refusing homebrew "no space left on device" long after space was
// freed, until a restart): once the data directory's disk has room again,
// JetStream is restarted in the process, which loads every stream again
// from its files; clients keep their connections. Until then problem
// says so, for /readyz, status and list_documents.
type natsDisk struct {
	ns      *natsserver.Server
	dir     string // the server's store directory
	minFree uint64
	free    func(dir string) (uint64, error)
	log     *slog.Logger

	mu     sync.Mutex
	failed string // the write error, "" while none
}

// noteWriteError is the server's logger's: a message saying a write
// failed for lack of space.
func (d *natsDisk) noteWriteError(msg string) {
	if !strings.Contains(msg, "no space left on device") {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed == "" {
		d.failed = msg
	}
}

// natsDiskEvery is how often a full disk is checked for room again.
const natsDiskEvery = 2 * time.Second

// errNATSDiskFull starts problem's error.
var errNATSDiskFull = errors.New("disk full")

// problem says why the embedded NATS cannot store writes now (a write
// failed, or its disk has less than minFree free), nil when it can.
func (d *natsDisk) problem() error {
	d.mu.Lock()
	failed := d.failed
	d.mu.Unlock()
	if failed != "" {
		return fmt.Errorf("%w: the embedded NATS could not write to %s (%s): free some space; it recovers by itself, and imports and resyncs fail until then",
			errNATSDiskFull, d.dir, clipMsg(failed))
	}
	if n, err := d.freeSpace(); err == nil && n < d.minFree {
		return fmt.Errorf("%w: %.1f MiB free on the disk of %s, less than the %.1f MiB kept free (--min-free-space): free some space; imports and resyncs fail until then",
			errNATSDiskFull, float64(n)/(1<<20), d.dir, float64(d.minFree)/(1<<20))
	}
	return nil
}

func (d *natsDisk) freeSpace() (uint64, error) {
	if d.free != nil {
		return d.free(d.dir)
	}
	return badgerstore.FreeSpace(d.dir)
}

// run restarts JetStream once a write failed and the disk has room again,
// checking every interval until ctx ends.
func (d *natsDisk) run(ctx context.Context, interval time.Duration) error {
	return every(ctx, interval, d.recover)
}

// recover restarts JetStream if a write failed and there is room now.
func (d *natsDisk) recover() {
	d.mu.Lock()
	failed := d.failed
	d.mu.Unlock()
	if failed == "" {
		return
	}
	if n, err := d.freeSpace(); err != nil || n < d.minFree {
		return
	}
	start := time.Now()
	if err := d.ns.DisableJetStream(); err != nil {
		d.log.Warn("restarting JetStream after a full disk: could not stop it; trying again", "err", err)
		return
	}
	if err := d.ns.EnableJetStream(&natsserver.JetStreamConfig{StoreDir: d.dir}); err != nil {
		d.log.Error("restarting JetStream after a full disk failed; trying again", "err", err)
		return
	}
	d.mu.Lock()
	d.failed = ""
	d.mu.Unlock()
	d.log.Info("disk space is back: JetStream restarted, and stores again", "took", time.Since(start).Round(time.Millisecond))
}

// clipMsg shortens a log message for a status line.
func clipMsg(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

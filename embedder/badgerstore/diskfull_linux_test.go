package badgerstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/ristretto/v2/z"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/badgerstore/storetest"
	"lorekeeper.dev/embedder/natsconsume"
)

// TestStore_DiskFilledUnderIt (issue 49, row 3): a store whose disk (a real
// tmpfs) another writer fills never crashes. Badger writes its value log
// and its memtables' logs through memory maps: it wrote into blocks the
// disk no longer had, and the process died of SIGBUS within seconds; and
// with no room for the next memtable's file it failed an assertion on the
// next write. Now a write passes or fails with the disk full, a new
// memtable takes the room kept for it (KeepReserve, which then says the
// disk is full, so that nothing more is written), and once the space is
// freed the store keeps its room again and stores, with every entity it
// acknowledged kept across a reopen.
func TestStore_DiskFilledUnderIt(t *testing.T) {
	big := strings.Repeat("A long description that fills the value log. ", 200)
	for _, c := range []struct {
		name    string
		vlog    int64  // Options.ValueLogFileSize
		tmpfs   string // its size
		desc    string // each entity's description
		fillAt  int    // batches before the disk is filled
		batch   int
		stopped func(s *badgerstore.Store, dir string) bool // the disk has stopped the writes
	}{
		{"value log", 4 << 20, "64m", big, 20, 20, func(*badgerstore.Store, string) bool { return false }},
		{"memtable", 16 << 20, "128m", "small", 0, 500, func(s *badgerstore.Store, dir string) bool {
			_, err := os.Stat(filepath.Join(dir, z.ReserveName))
			return errors.Is(err, os.ErrNotExist)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mnt := storetest.Tmpfs(t, c.tmpfs)
			dir := filepath.Join(mnt, "badger")
			opts := &badgerstore.Options{ValueLogFileSize: c.vlog}
			s, err := badgerstore.Open(dir, newIndex(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.KeepReserve(); err != nil {
				t.Fatalf("KeepReserve on an empty disk: %v", err)
			}
			stored := 0
			write := func(n int) error {
				t.Helper()
				var ws []badgerstore.Write
				for i := range c.batch {
					e := spell(fmt.Sprintf("s%06d-%03d", n, i), fmt.Sprintf("Spell %d %d", n, i), 1, "evocation", fmt.Sprint(n))
					e.Description = c.desc
					ws = append(ws, badgerstore.Write{Entity: e})
				}
				err := s.Apply(t.Context(), ws)
				if err == nil {
					stored += len(ws)
				}
				return err
			}
			var full error
			var fillPath string
			for n := 0; full == nil && n < 1000; n++ {
				if n == c.fillAt {
					fillPath = storetest.Fill(t, mnt) // another writer takes every block left
				}
				if err := write(n); err != nil {
					if !natsconsume.DiskFull(err) {
						t.Fatalf("batch %d: %v, want a full disk", n, err)
					}
					full = err
				}
				if n >= c.fillAt && c.stopped(s, dir) {
					full = s.KeepReserve()
				}
			}
			if full == nil {
				t.Fatal("the disk never stopped the writes")
			}
			t.Logf("%d entities stored, then: %v", stored, full)
			if err := os.Remove(fillPath); err != nil {
				t.Fatal(err)
			}
			if err := s.KeepReserve(); err != nil {
				t.Fatalf("KeepReserve once space is freed: %v", err)
			}
			for n := 1000; n < 1003; n++ {
				if err := write(n); err != nil {
					t.Fatalf("a batch once space is freed: %v", err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = badgerstore.Open(dir, newIndex(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.Stats().Entities; got != stored {
				t.Errorf("%d entities after a reopen, want the %d stored", got, stored)
			}
		})
	}
}

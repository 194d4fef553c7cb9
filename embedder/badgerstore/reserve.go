package badgerstore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dgraph-io/ristretto/v2/z"
)

// reserveSize is the room kept for the next memtable's file: Badger makes
// it twice the memtable's size.
const reserveSize = 2 * memTableSize

// KeepReserve makes sure the store's directory holds the room for one more
// memtable (z.ReserveName, allocated): Badger cannot go on without a
// memtable, and on a full disk the next one's file spends this room
// instead of failing. It returns an error, saying the disk is full, while
// the room cannot be had again; store nothing meanwhile. A store in memory
// needs none.
func (s *Store) KeepReserve() error {
	if s.bopts.InMemory {
		return nil
	}
	path := filepath.Join(s.dir, z.ReserveName)
	if st, err := os.Stat(path); err == nil && st.Size() == reserveSize {
		return nil
	}
	if err := allocateFile(path, reserveSize); err != nil {
		return fmt.Errorf("disk full: no room for the %d MiB kept free in %s for Badger's next memtable: %w", reserveSize>>20, s.dir, err)
	}
	return nil
}

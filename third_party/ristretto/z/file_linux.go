/*
 * SPDX-FileCopyrightText: © Hypermode Inc. <hello@hypermode.com>
 * SPDX-License-Identifier: Apache-2.0
 */

package z

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// allocate gives a new file its size with every block allocated
// (fallocate), so that a write through its memory map never finds the disk
// full: it would fault (SIGBUS) and kill the process, where a full disk
// now fails the file's creation with ENOSPC, which Badger returns as an
// error. A file system without fallocate gets a sparse file, as upstream
// does. (A LoreKeeper change to ristretto v2.2.0; see ../README.md.)
//
// A memtable's file (*.mem) that finds the disk full may spend the room
// kept for one: Badger cannot go on without a memtable (it leaves none and
// fails an assertion on the next write), so the file ReserveName beside it,
// if there is one, is deleted and the allocation tried again.
func allocate(fd *os.File, size int64) error {
	err := unix.Fallocate(int(fd.Fd()), 0, 0, size)
	if errors.Is(err, unix.ENOSPC) && strings.HasSuffix(fd.Name(), ".mem") &&
		os.Remove(filepath.Join(filepath.Dir(fd.Name()), ReserveName)) == nil {
		err = unix.Fallocate(int(fd.Fd()), 0, 0, size)
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return fd.Truncate(size)
	}
	return err
}

// Truncate would truncate the mmapped file to the given size. On Linux, we truncate
// the underlying file and then call mremap, but on other systems, we unmap first,
// then truncate, then re-map.
func (m *MmapFile) Truncate(maxSz int64) error {
	if err := m.Sync(); err != nil {
		return fmt.Errorf("while sync file: %s, error: %v\n", m.Fd.Name(), err)
	}
	if err := m.Fd.Truncate(maxSz); err != nil {
		return fmt.Errorf("while truncate file: %s, error: %v\n", m.Fd.Name(), err)
	}

	var err error
	m.Data, err = mremap(m.Data, int(maxSz)) // Mmap up to max size.
	return err
}

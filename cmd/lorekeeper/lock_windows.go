//go:build windows

package main

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte tryLock locks, far past the few hundred bytes of
// JSON the owner writes: Windows byte-range locks are mandatory, and other
// processes must still read what the owner wrote.
const lockOffset = 1 << 30

// tryLock takes an exclusive lock on f without waiting (LockFileEx).
// Closing f (or the process ending) releases it.
func tryLock(f *os.File) error {
	ol := &windows.Overlapped{Offset: lockOffset}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

// processExiting: Windows gives no cheap view of a process that is ending;
// only the lock's release counts.
func processExiting(int) bool { return false }

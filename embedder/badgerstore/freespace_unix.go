//go:build unix

package badgerstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// FreeSpace is the space available to this process on the filesystem
// holding dir.
func FreeSpace(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// allocateFile makes path size bytes long with every block allocated, so
// that the room is there for whoever may use it; ENOSPC when the disk has
// not that much free.
func allocateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		err = f.Truncate(size) // no fallocate here: Badger's files are sparse too
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

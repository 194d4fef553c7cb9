//go:build !unix

package badgerstore

import (
	"errors"
	"os"
)

// FreeSpace is not known here: ErrUnsupported, and checks are skipped.
func FreeSpace(string) (uint64, error) {
	return 0, errors.ErrUnsupported
}

// allocateFile makes path size bytes long (sparse here).
func allocateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

//go:build !unix

package badgerstore

import "errors"

// FreeSpace is not known here: ErrUnsupported, and checks are skipped.
func FreeSpace(string) (uint64, error) {
	return 0, errors.ErrUnsupported
}

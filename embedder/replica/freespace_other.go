//go:build !unix

package replica

import "errors"

// freeSpace is not known here: the check is skipped.
func freeSpace(string) (uint64, error) {
	return 0, errors.ErrUnsupported
}

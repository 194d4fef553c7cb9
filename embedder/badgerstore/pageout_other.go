//go:build !linux

package badgerstore

// ReleaseFilePages does nothing here: it needs Linux's MADV_PAGEOUT.
func (s *Store) ReleaseFilePages() error { return nil }

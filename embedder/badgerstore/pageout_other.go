//go:build !linux

package badgerstore

// ReleaseTablePages does nothing here: it needs Linux's MADV_PAGEOUT.
func (s *Store) ReleaseTablePages() error { return nil }

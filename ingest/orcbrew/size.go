package orcbrew

import (
	"errors"
	"fmt"
	"io"
)

// DefaultMaxSize is the largest OrcBrew object accepted unless configured
// otherwise: far above real homebrew files (the largest known are a few
// megabytes), far below what would strain the bucket or the parser's
// memory (a file is parsed whole).
const DefaultMaxSize = 16 << 20

// ErrTooLarge is returned (wrapped) for an object over the size limit.
var ErrTooLarge = errors.New("orcbrew object too large")

// PutOptions tune Put, PutFile and PutDir. A nil *PutOptions, and every
// zero field, means the default.
type PutOptions struct {
	// MaxSize is the largest object accepted, in bytes (default
	// DefaultMaxSize). A larger one is refused before anything is stored.
	MaxSize int64
}

func (o *PutOptions) maxSize() int64 {
	if o == nil || o.MaxSize <= 0 {
		return DefaultMaxSize
	}
	return o.MaxSize
}

// tooLarge is the error for an object of size bytes (at least size, when
// it was cut off while reading) over max.
func tooLarge(name string, size, limit int64, atLeast bool) error {
	more := ""
	if atLeast {
		more = "more than "
	}
	return fmt.Errorf("%w: %s is %s%s, over the limit of %d bytes (%s)", ErrTooLarge, name, more, byteSize(size), limit, byteSize(limit))
}

// byteSize says n in the unit people read: "52.4 MB (52428800 bytes)".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitReader reads r and fails with ErrTooLarge once more than max bytes
// came, so that a reader of unknown length never puts more than max bytes
// (the object store drops the chunks of a put that fails).
type limitReader struct {
	r    io.Reader
	name string
	max  int64
	n    int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if int64(len(p)) > l.max-l.n+1 {
		p = p[:l.max-l.n+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return 0, tooLarge(l.name, l.n, l.max, true)
	}
	return n, err
}

package vectorindex

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Errors returned by Index, matched with errors.Is. The underlying backend
// error stays reachable with errors.As (a gRPC status, for instance).
var (
	// ErrNotFound: the backend's collection does not exist (dropped behind
	// the index's back). Deleting a missing point is not an error.
	ErrNotFound = errors.New("vectorindex: not found")
	// ErrUnavailable: the backend cannot be reached or timed out; the
	// caller may fall back to keyword search or retry later.
	ErrUnavailable = errors.New("vectorindex: backend unavailable")
	// ErrDimensionMismatch: a vector's length differs from the index's
	// dimensions, or an existing collection has other dimensions.
	ErrDimensionMismatch = errors.New("vectorindex: dimension mismatch")
	// ErrInvalidFilter: a filter names an unknown field, uses a condition of
	// the wrong type for it, or lists no values.
	ErrInvalidFilter = errors.New("vectorindex: invalid filter")
	// ErrInvalidArgument: an empty ID, a zero or non-finite vector, a limit
	// below 1, a malformed payload.
	ErrInvalidArgument = errors.New("vectorindex: invalid argument")
	// ErrClosed: the index was closed.
	ErrClosed = errors.New("vectorindex: index closed")
)

// Error is the error Index returns for a failed backend call: the operation,
// the backend, the class (one of the sentinels, or nil when unclassified)
// and the backend's own error.
type Error struct {
	Op      string // "upsert", "delete", "search", "count"
	Backend string
	Kind    error
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("vectorindex: %s %s: %v", e.Backend, e.Op, e.Err)
}

// Unwrap returns the backend error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's class.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// classify maps a raw driver error to a sentinel; nil when it knows none.
// Drivers return raw errors (see package driver), so this is the one place
// that knows how backends fail.
func classify(err error) error {
	for _, k := range []error{ErrNotFound, ErrUnavailable, ErrDimensionMismatch, ErrInvalidFilter, ErrInvalidArgument, ErrClosed} {
		if errors.Is(err, k) {
			return k
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrUnavailable
	}
	// status.FromError unwraps, so the go-client's QdrantError wrapper is fine.
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.NotFound:
			return ErrNotFound
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
			return ErrUnavailable
		case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
			return ErrInvalidArgument
		}
	}
	return nil
}

// NewError classifies a backend error for operation op, as Index does; driver
// packages use it for the errors of their constructors. Context errors
// return unchanged.
func NewError(op, backend string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &Error{Op: op, Backend: backend, Kind: classify(err), Err: err}
}

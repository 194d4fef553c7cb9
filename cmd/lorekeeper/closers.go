package main

import (
	"context"
	"errors"
)

// closers undoes a start: each role and process pushes what it opened, and
// close runs them in reverse order. It keeps going after an error so that
// Badger is always closed, and returns the errors joined.
type closers []func(context.Context) error

func (c *closers) push(f func(context.Context) error) { *c = append(*c, f) }

func (c *closers) close(ctx context.Context) error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i](ctx))
	}
	*c = nil
	return errors.Join(errs...)
}

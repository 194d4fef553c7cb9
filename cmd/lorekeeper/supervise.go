package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// defaultShutdownTimeout bounds a graceful stop: the batch in flight is
// stored, calls in flight are answered, connections drain.
const defaultShutdownTimeout = 30 * time.Second

// supervisor runs a process's long-running parts (the consumer, the
// servers, the resync schedule, the watchers) in an errgroup. A part that
// fails stops the whole process: the supervisor's context ends, the process
// shuts down, and it exits with that part's error, so that a process
// supervisor (systemd, Kubernetes, compose) restarts it instead of leaving
// a process up that no longer does its job.
type supervisor struct {
	g        *errgroup.Group
	ctx      context.Context
	stopping atomic.Bool
	log      *slog.Logger
}

// newSupervisor returns a supervisor whose context ends when ctx does (a
// signal) or when a part fails.
func newSupervisor(ctx context.Context, log *slog.Logger) *supervisor {
	g, gctx := errgroup.WithContext(ctx)
	return &supervisor{g: g, ctx: gctx, log: log}
}

// Go runs part in the group. part returns nil (or context.Canceled) when
// the closer that owns it stops it or the supervisor's context ends; an
// error at any other time is a failure of the process.
func (s *supervisor) Go(name string, part func() error) {
	s.g.Go(func() error {
		err := part()
		if err == nil || errors.Is(err, context.Canceled) {
			return nil
		}
		if s.stopping.Load() || s.ctx.Err() != nil {
			s.log.Warn(name+" stopped with an error while shutting down", "err", err)
			return nil
		}
		err = fmt.Errorf("%s: %w", name, err)
		s.log.Error("a role stopped unexpectedly; stopping the process so that it can be restarted", "role", name, "err", err)
		return err
	})
}

// Context ends when the process must stop; its cause is the failed part's
// error when one failed.
func (s *supervisor) Context() context.Context { return s.ctx }

// Shutdown stops the process within timeout: it marks the stop as asked
// for, runs cl (which stops every part in order), and waits for the parts.
// It returns the error of the part that failed, if one did (the process
// then exits non-zero), and otherwise what closing reported.
func (s *supervisor) Shutdown(cl *closers, timeout time.Duration) error {
	s.stopping.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	closeErr := cl.close(ctx)
	waited := make(chan error, 1)
	go func() { waited <- s.g.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return errors.Join(closeErr, fmt.Errorf("shutdown did not finish within --shutdown-timeout %s", timeout))
	}
	if errors.Is(closeErr, context.DeadlineExceeded) {
		return errors.Join(closeErr, fmt.Errorf("shutdown did not finish within --shutdown-timeout %s", timeout))
	}
	return closeErr
}

// shutdownFlags bound a role process's graceful stop.
type shutdownFlags struct {
	timeout time.Duration
}

func (s *shutdownFlags) register(fs *flagSet) {
	fs.Duration(&s.timeout, "shutdown-timeout", defaultShutdownTimeout, "longest a graceful stop may take (the batch in flight stored, calls in flight answered) before the process exits anyway")
}

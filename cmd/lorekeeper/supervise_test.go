package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSupervisor: a part that fails ends the supervisor's context and
// becomes the process's error; parts that stop cleanly (nil, or cancelled)
// and errors while shutting down do not.
func TestSupervisor(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		part     func(ctx context.Context) error
		wantFail bool
	}{
		{"fails", func(context.Context) error { return boom }, true},
		{"stops cleanly when asked", func(ctx context.Context) error { <-ctx.Done(); return nil }, false},
		{"returns the context's error", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, false},
		{"errs while shutting down", func(ctx context.Context) error { <-ctx.Done(); return boom }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			sup := newSupervisor(ctx, testLogger(t))
			partCtx, stopPart := context.WithCancel(sup.Context())
			sup.Go("the part", func() error { return tt.part(partCtx) })
			var cl closers
			cl.push(func(context.Context) error { stopPart(); return nil })
			select {
			case <-sup.Context().Done():
				if !tt.wantFail {
					t.Fatal("the supervisor stopped without a failure")
				}
				if cause := context.Cause(sup.Context()); !errors.Is(cause, boom) {
					t.Errorf("cause = %v, want the part's error", cause)
				}
			case <-time.After(200 * time.Millisecond):
				if tt.wantFail {
					t.Fatal("a failed part did not stop the supervisor")
				}
				stop() // a signal
			}
			err := sup.Shutdown(&cl, time.Second)
			if tt.wantFail != (err != nil) {
				t.Fatalf("Shutdown = %v, want failure %v", err, tt.wantFail)
			}
			if tt.wantFail && (!errors.Is(err, boom) || !strings.Contains(err.Error(), "the part")) {
				t.Errorf("Shutdown = %v, want the part's error, naming it", err)
			}
		})
	}
}

// TestSupervisor_ShutdownTimeout: a part that does not stop makes
// Shutdown return after the timeout, saying so.
func TestSupervisor_ShutdownTimeout(t *testing.T) {
	sup := newSupervisor(t.Context(), testLogger(t))
	hang := make(chan struct{})
	defer close(hang)
	sup.Go("stubborn", func() error { <-hang; return nil })
	var cl closers
	start := time.Now()
	err := sup.Shutdown(&cl, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "--shutdown-timeout") {
		t.Errorf("Shutdown with a part that never stops = %v, want the timeout named", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("Shutdown waited %s", waited)
	}
}

package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLoadMemory: nothing changes while the store's index is being built;
// from then until the replica catches up the collector runs at GOGC 50
// under the load's memory limit, or above the live heap when the index is
// larger (a restart of a large store); at catch-up GOGC returns to its
// default and the limit follows the live heap; an operator's GOGC or
// GOMEMLIMIT is left alone. Caught up before the index is built (a restart
// with nothing new to store), the load's settings never come.
func TestLoadMemory(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	prevGC, prevLimit := gcPercent(), limit()
	t.Cleanup(func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	})
	const small, large = 60 << 20, 700 << 20
	tests := []struct {
		name                 string
		env                  map[string]string
		live                 uint64
		caughtUpFirst        bool
		loadGC, doneGC       int
		loadLimit, doneLimit int64
	}{
		{"defaults", nil, small, false, 50, 100, loadMemoryLimit, steadyLimit(small)},
		{"a large index", nil, large, false, 50, 100, steadyLimit(large), steadyLimit(large)},
		{"caught up before the index was built", nil, large, true, 100, 100, math.MaxInt64, steadyLimit(large)},
		{"operator's GOGC", map[string]string{"GOGC": "200"}, small, false, 100, 100, loadMemoryLimit, steadyLimit(small)},
		{"operator's GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "1GiB"}, large, false, 50, 100, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			heap := tt.live
			steady := &steadyMemory{live: func() uint64 { return heap }}
			indexBuilt, caughtUp := loadMemory(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }, steady)
			if got, got2 := gcPercent(), limit(); got != 100 || got2 != math.MaxInt64 {
				t.Errorf("while the index is built: GOGC %d, limit %d; want the defaults", got, got2)
			}
			if tt.caughtUpFirst {
				caughtUp()
			}
			indexBuilt()
			if got, got2 := gcPercent(), limit(); !tt.caughtUpFirst && (got != tt.loadGC || got2 != tt.loadLimit) {
				t.Errorf("during the load: GOGC %d, limit %d; want %d, %d", got, got2, tt.loadGC, tt.loadLimit)
			}
			caughtUp()
			if got, got2 := gcPercent(), limit(); got != tt.doneGC || got2 != tt.doneLimit {
				t.Errorf("caught up: GOGC %d, limit %d; want %d, %d", got, got2, tt.doneGC, tt.doneLimit)
			}
			// The limit follows the live heap as it grows.
			heap *= 3
			steady.update()
			want := tt.doneLimit
			if want != math.MaxInt64 {
				want = steadyLimit(heap)
			}
			if got := limit(); got != want {
				t.Errorf("live heap tripled: limit %d, want %d", got, want)
			}
		})
	}
}

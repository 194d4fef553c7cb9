package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
	small, large := heapMemory{live: 60 << 20, overhead: 10 << 20}, heapMemory{live: 700 << 20, overhead: 150 << 20}
	tests := []struct {
		name                 string
		env                  map[string]string
		heap                 heapMemory
		caughtUpFirst        bool
		loadGC, doneGC       int
		loadLimit, doneLimit int64
		bundled              bool // the load's vectors are bundled
	}{
		{"defaults", nil, small, false, 50, 100, loadMemoryLimit, steadyLimit(small), false},
		{"bundled vectors", nil, small, false, 50, 100, bundledLoadMemoryLimit, steadyLimit(small), true},
		{"a large index", nil, large, false, 50, 100, steadyLimit(large), steadyLimit(large), false},
		{"caught up before the index was built", nil, large, true, 100, 100, math.MaxInt64, steadyLimit(large), false},
		{"operator's GOGC", map[string]string{"GOGC": "200"}, small, false, 100, 100, loadMemoryLimit, steadyLimit(small), false},
		{"operator's GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "1GiB"}, large, false, 50, 100, math.MaxInt64, math.MaxInt64, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			heap := tt.heap
			steady := &steadyMemory{heap: func() heapMemory { return heap }}
			loadLimit := func() int64 {
				if tt.bundled {
					return bundledLoadMemoryLimit
				}
				return loadMemoryLimit
			}
			indexBuilt, caughtUp, _ := loadMemory(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }, steady, loadLimit)
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
			// The limit follows the heap as it grows.
			heap.live *= 3
			heap.overhead *= 2
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

// TestLoadMemory_limitChanged: a bundled load's limit drops to the
// model's once the model embeds (homebrew) while the load goes on; after
// catch-up a change is no longer the load's, and says so.
func TestLoadMemory_limitChanged(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	heap := heapMemory{live: 60 << 20, overhead: 10 << 20}
	steady := &steadyMemory{heap: func() heapMemory { return heap }}
	load := int64(bundledLoadMemoryLimit)
	indexBuilt, caughtUp, limitChanged := loadMemory(func(string) (string, bool) { return "", false }, steady, func() int64 { return load })
	indexBuilt()
	if got := limit(); got != bundledLoadMemoryLimit {
		t.Fatalf("a bundled load: limit %d, want %d", got, bundledLoadMemoryLimit)
	}
	load = loadMemoryLimit
	if !limitChanged() {
		t.Error("limitChanged during the load says the load is over")
	}
	if got := limit(); got != loadMemoryLimit {
		t.Errorf("once the model embeds: limit %d, want %d", got, loadMemoryLimit)
	}
	caughtUp()
	steadyAt := limit()
	load = bundledLoadMemoryLimit
	if limitChanged() || limit() != steadyAt {
		t.Errorf("after catch-up: limitChanged moved the limit to %d (steady %d) or said the load goes on", limit(), steadyAt)
	}
}

// TestSteadyLimit_AboveWhatIsHeld: the steady limit leaves room above all
// the runtime holds, its overhead included, even when that overhead is
// large: a heap of small objects of which every other one is garbage
// keeps its spans, half unused. A limit of the live heap and its room
// alone (the overhead left out) is below what the runtime holds, and the
// collector would run without pause.
func TestSteadyLimit_AboveWhatIsHeld(t *testing.T) {
	const n = 1 << 20
	keep := make([]*[64]byte, 0, n/2)
	for i := range n {
		b := new([64]byte)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
	runtime.GC()
	h := newSteadyMemory().heap()
	held := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64()
	}()
	if h.live < 32<<20 || h.overhead < 16<<20 {
		t.Fatalf("live heap %d MiB, overhead %d MiB; want at least 32 and 16 (half of 64 MiB of small objects kept)", h.live>>20, h.overhead>>20)
	}
	if limit := steadyLimit(h); uint64(limit) <= held+16<<20 {
		t.Errorf("limit %d MiB, but the runtime holds %d MiB (overhead %d MiB): want 16 MiB of room or more", limit>>20, held>>20, h.overhead>>20)
	}
	runtime.KeepAlive(keep)
}

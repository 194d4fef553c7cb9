package query

import (
	"testing"
	"time"
)

// snapshotOf is a snapshot whose one group keeps n candidates not ranked
// yet, in an array it owns.
func snapshotOf(n int) *snapshot {
	a := make([]scored, n)
	return &snapshot{groups: []*snapGroup{{total: n, rest: &ranking{h: a}}}, arrays: [][]scored{a}}
}

func same(a, b []scored) bool { return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0] }

// TestSnapshots_Arrays: a snapshot's arrays go to later rankings only once
// it is out of the cache (evicted, expired or replaced) and no page reads
// it; a snapshot handed from one id to another (a list ranked again) keeps
// them; at most maxSpare wait, the largest.
func TestSnapshots_Arrays(t *testing.T) {
	half := maxSnapshotItems/2 + 1

	t.Run("evicted while a page reads it", func(t *testing.T) {
		c := newSnapshots()
		s := snapshotOf(half)
		id := c.put(s)
		got, ok := c.get(id) // a page starts reading
		if !ok || got != s {
			t.Fatal("the snapshot just kept is not there")
		}
		c.put(snapshotOf(half)) // over maxSnapshotItems: s is evicted
		if _, ok := c.get(id); ok {
			t.Fatal("the first snapshot is still kept past maxSnapshotItems")
		}
		if a := c.array(half); same(a, s.groups[0].rest.h) {
			t.Fatal("an evicted snapshot's array went to a ranking while a page still read it")
		}
		c.release(s)
		if a := c.array(half); !same(a, s.groups[0].rest.h) {
			t.Error("the evicted snapshot's array did not go to the next ranking once its page was done")
		}
	})

	t.Run("expired", func(t *testing.T) {
		c := newSnapshots()
		now := time.Now()
		c.now = func() time.Time { return now }
		s := snapshotOf(10)
		id := c.put(s)
		now = now.Add(snapshotTTL + time.Second)
		if _, ok := c.get(id); ok {
			t.Fatal("an expired snapshot was served")
		}
		if a := c.array(5); !same(a, s.groups[0].rest.h) {
			t.Error("an expired snapshot's array did not go to the next ranking")
		}
	})

	t.Run("handed to another id", func(t *testing.T) {
		c := newSnapshots()
		s := snapshotOf(10)
		id := c.put(s)
		if got := c.take(id); got != s {
			t.Fatal("take did not return the snapshot")
		}
		c.putAs("other", s)
		if a := c.array(5); same(a, s.groups[0].rest.h) {
			t.Error("a snapshot moved to another id lost its array")
		}
	})

	t.Run("at most maxSpare, the largest", func(t *testing.T) {
		c := newSnapshots()
		for i := range maxSpare + 2 {
			c.put(snapshotOf(10 * (i + 1)))
		}
		for range maxSnapshots {
			c.put(&snapshot{}) // evicts the ones before, one by one
		}
		if len(c.spare) != maxSpare {
			t.Fatalf("%d spare arrays, want %d", len(c.spare), maxSpare)
		}
		// Kept: 30, 40, 50, 60; the smallest that fits comes first.
		if a := c.array(1); cap(a) != 30 {
			t.Errorf("array(1) has room for %d, want 30 (the smallest of the largest %d)", cap(a), maxSpare)
		}
		if a := c.array(45); cap(a) != 50 {
			t.Errorf("array(45) has room for %d, want 50", cap(a))
		}
	})

	t.Run("none fits", func(t *testing.T) {
		c := newSnapshots()
		if a := c.array(7); len(a) != 0 || cap(a) < 7 {
			t.Errorf("array(7) = len %d cap %d, want an empty array with room for 7", len(a), cap(a))
		}
	})
}

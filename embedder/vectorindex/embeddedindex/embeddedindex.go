// Package embeddedindex is the embedded vector index backend: cosine
// similarity against every vector held in memory (no approximate neighbour
// graph: every candidate is scored).
//
// Vectors are L2-normalised on insert and kept in fixed point in one
// contiguous array (rows.go): 8 bits per component with a scale per vector
// for 256 or more dimensions (5 MB for 10,000 points of 512 dimensions),
// 16 bits below that. A search is an integer dot product per candidate
// and a bounded heap. Scoring thousands of vectors is bound by memory
// bandwidth, and fewer bytes take less time; an 8-bit score is within
// about 1e-3 of the float32 cosine, a 16-bit one within sqrt(dims)/32767.
// A Filter's IDs restrict the scan to those candidates first; keyword,
// range and bool conditions are then evaluated on the payload, kept as
// interned terms (payload.go). Nothing is persisted: the storage package
// keeps the vectors in Badger and loads them at start through Upsert.
//
// Searches run concurrently under a read lock; a write takes the lock
// exclusively, after normalising its vectors outside it.
package embeddedindex

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
)

// Backend is the name the embedded backend reports.
const Backend = "embedded"

// Index is the embedded driver.
type Index struct {
	dims int

	mu       sync.RWMutex
	ids      []string
	vecs     rows     // row i is point i's unit vector (rows.go)
	payloads []record // see payload.go
	dict     dictionary
	pos      map[string]int
	// gen counts the writes that moved or added points: rows resolved
	// before a change are stale after it.
	gen  uint64
	rows rowCache
}

// rowCache remembers the rows of the last few ID lists Scores resolved.
// The query service asks for the same candidates (the very same key
// strings) call after call, and resolving thousands of keys through the
// map costs most of what scoring them does; comparing the lists is a
// pointer check per key.
type rowCache struct {
	mu      sync.Mutex
	gen     uint64
	entries [4]rowEntry
	next    int
}

// rowEntry is an ID list resolved: the rows to score in memory order, each
// with the place in the list its score goes to. Candidates come in the
// caller's order, and rows drift from it as deletes move the last row into
// each hole; 6,000 rows read shuffled took five times as long as in order.
type rowEntry struct {
	ids    []string
	rows   []int32 // ascending
	places []int32 // places[k]: the index in ids of rows[k]
	absent []int32 // the indexes in ids the index does not hold
}

// get returns the entry cached for ids at generation gen.
func (c *rowCache) get(gen uint64, ids []string) *rowEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		c.entries, c.next, c.gen = [4]rowEntry{}, 0, gen
		return nil
	}
	for i := range c.entries {
		if e := &c.entries[i]; e.ids != nil && slices.Equal(e.ids, ids) {
			return e
		}
	}
	return nil
}

// put caches e at generation gen.
func (c *rowCache) put(gen uint64, e rowEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		c.entries, c.next, c.gen = [4]rowEntry{}, 0, gen
	}
	c.entries[c.next] = e
	c.next = (c.next + 1) % len(c.entries)
}

var _ driver.Index = (*Index)(nil)

// New returns an empty driver for vectors of dims dimensions.
func New(dims int) *Index {
	return &Index{dims: dims, vecs: newRows(dims, 0), pos: make(map[string]int), dict: newDictionary()}
}

// Open returns a portable index over a new embedded driver, with
// opts.Dimensions (required) and opts.Fields.
func Open(opts *vectorindex.Options) (*vectorindex.Index, error) {
	if opts == nil || opts.Dimensions <= 0 {
		return nil, errDims
	}
	if err := vectorindex.ValidateFields(opts.Fields); err != nil {
		return nil, err
	}
	return vectorindex.New(New(opts.Dimensions), opts), nil
}

// Backend returns "embedded".
func (x *Index) Backend() string { return Backend }

// Dimensions returns the vector length.
func (x *Index) Dimensions() int { return x.dims }

// Upsert inserts or replaces points. Vectors are normalised before the lock
// is taken, so searches wait only for the copy in and the payloads'
// encoding (a few map lookups each).
func (x *Index) Upsert(ctx context.Context, points []driver.Point) error {
	buf := newRows(x.dims, len(points))
	unit := make([]float32, x.dims)
	for i := range points {
		normalize(unit, points[i].Vector)
		buf.set(buf.push(), unit)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if fresh := len(points); cap(x.ids)-len(x.ids) < fresh {
		// Grow once for a bulk load instead of doubling repeatedly.
		x.ids = slices.Grow(x.ids, fresh)
		x.payloads = slices.Grow(x.payloads, fresh)
		x.vecs.grow(fresh)
	}
	for i := range points {
		rec := x.dict.encode(points[i].Payload)
		if j, ok := x.pos[points[i].ID]; ok {
			x.vecs.copyRow(j, &buf, i)
			x.payloads[j] = rec
			continue
		}
		x.pos[points[i].ID] = len(x.ids)
		x.gen++
		x.ids = append(x.ids, points[i].ID)
		x.payloads = append(x.payloads, rec)
		x.vecs.copyRow(x.vecs.push(), &buf, i)
	}
	return nil
}

// Delete removes points, moving the last point into each hole.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		j, ok := x.pos[id]
		if !ok {
			continue
		}
		x.gen++
		last := len(x.ids) - 1
		if j != last {
			x.ids[j] = x.ids[last]
			x.payloads[j] = x.payloads[last]
			x.vecs.copyRow(j, &x.vecs, last)
			x.pos[x.ids[j]] = j
		}
		x.ids[last] = ""
		x.payloads[last] = nil
		x.ids = x.ids[:last]
		x.payloads = x.payloads[:last]
		x.vecs.truncate(last)
		delete(x.pos, id)
	}
	return nil
}

// IDs returns the IDs of the points that match f.
func (x *Index) IDs(ctx context.Context, f *driver.Filter) ([]string, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.dict.compile(f)
	keep := func(j int) bool { return c.matches(x.payloads[j]) }
	var out []string
	if f != nil && f.IDs != nil {
		for _, j := range x.positions(f.IDs) {
			if keep(j) {
				out = append(out, x.ids[j])
			}
		}
		return out, nil
	}
	for j := range x.ids {
		if keep(j) {
			out = append(out, x.ids[j])
		}
	}
	return out, nil
}

// positions returns the rows of the known ids, ascending and without
// repeats: sorted rows also read the vectors in memory order. The caller
// holds the lock.
func (x *Index) positions(ids []string) []int {
	rows := make([]int, 0, len(ids))
	for _, id := range ids {
		if j, ok := x.pos[id]; ok {
			rows = append(rows, j)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// Count returns the number of points.
func (x *Index) Count(ctx context.Context) (int, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids), nil
}

// Close drops the vectors.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ids, x.vecs, x.payloads, x.pos, x.dict = nil, newRows(x.dims, 0), nil, map[string]int{}, newDictionary()
	x.gen++
	return nil
}

// checkEvery is how many candidates a search scores between context checks.
const checkEvery = 16384

// Search scores the candidates (f.IDs, or every point) that pass the payload
// conditions and keeps the best limit in a min-heap.
func (x *Index) Search(ctx context.Context, vector []float32, f *driver.Filter, limit int) ([]driver.Hit, error) {
	q := x.query(vector)

	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.dict.compile(f)
	h := topK{k: limit}
	if f != nil && f.IDs != nil {
		rows := x.positions(f.IDs)
		if limit >= len(rows) {
			// Every match is kept (the query service scores all its
			// candidates): one sort costs less than a heap of them all.
			h.h = make([]scored, 0, len(rows))
			for _, j := range rows {
				if c == nil || c.matches(x.payloads[j]) {
					h.h = append(h.h, scored{j, x.score(q, j)})
				}
			}
			return h.sorted(x.ids), nil
		}
		for _, j := range rows {
			if c != nil && !c.matches(x.payloads[j]) {
				continue
			}
			h.offer(j, x.score(q, j), x.ids)
		}
		return h.sorted(x.ids), nil
	}
	// scan scores points [lo, hi) into t, checking ctx now and then.
	scan := func(t *topK, lo, hi int) {
		for j := lo; j < hi; j++ {
			if j%checkEvery == checkEvery-1 && ctx.Err() != nil {
				return
			}
			if c != nil && !c.matches(x.payloads[j]) {
				continue
			}
			s := x.score(q, j)
			if len(t.h) == t.k && s < t.h[0].score {
				continue // cannot enter the heap: skip the call
			}
			t.offer(j, s, x.ids)
		}
	}
	n := len(x.ids)
	if workers := min(runtime.GOMAXPROCS(0), n/parallelMin); workers > 1 {
		// A scan larger than the caches is bound by memory bandwidth;
		// splitting it across cores shortens it.
		heaps := make([]topK, workers)
		var wg sync.WaitGroup
		per := (n + workers - 1) / workers
		for w := range workers {
			heaps[w].k = limit
			wg.Go(func() { scan(&heaps[w], w*per, min((w+1)*per, n)) })
		}
		wg.Wait()
		for _, hw := range heaps {
			for _, s := range hw.h {
				h.offer(s.j, s.score, x.ids)
			}
		}
	} else {
		scan(&h, 0, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.sorted(x.ids), nil
}

// Scores sets out[i] to the similarity of vector and point ids[i] (NaN for
// an unknown ID), in the order asked: no sort, no hits to build.
func (x *Index) Scores(ctx context.Context, vector []float32, ids []string, out []float32) error {
	q := x.query(vector)
	nan := float32(math.NaN())
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.rows.get(x.gen, ids)
	if e == nil {
		e = x.resolve(ids)
		x.rows.put(x.gen, *e)
	}
	for _, i := range e.absent {
		out[i] = nan
	}
	// score scores rows [lo, hi), checking ctx now and then. Each row has
	// its own place in out: parts never write the same element.
	score := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if k%checkEvery == checkEvery-1 && ctx.Err() != nil {
				return
			}
			out[e.places[k]] = x.score(q, int(e.rows[k]))
		}
	}
	n := len(e.rows)
	if workers := min(runtime.GOMAXPROCS(0), n/scoresParallelMin); workers > 1 {
		// As for Search: megabytes of vectors, bound by memory bandwidth.
		var wg sync.WaitGroup
		per := (n + workers - 1) / workers
		for w := range workers {
			wg.Go(func() { score(w*per, min((w+1)*per, n)) })
		}
		wg.Wait()
	} else {
		score(0, n)
	}
	return ctx.Err()
}

// query returns vector normalised, in fixed point.
func (x *Index) query(vector []float32) []int16 {
	unit := make([]float32, x.dims)
	normalize(unit, vector)
	q := make([]int16, x.dims)
	quantize(q, unit)
	return q
}

// score is the similarity of the fixed-point query q and point j. The
// caller holds the lock.
func (x *Index) score(q []int16, j int) float32 { return x.vecs.score(q, j) }

// resolve finds the rows of ids, sorted for Scores. The caller holds the
// lock.
func (x *Index) resolve(ids []string) *rowEntry {
	// A copy of ids: the caller may reuse its slice. The strings are
	// shared, so the next comparison is still a pointer check each.
	e := &rowEntry{ids: slices.Clone(ids)}
	type rowPlace struct{ row, place int32 }
	found := make([]rowPlace, 0, len(ids))
	for i, id := range ids {
		if j, ok := x.pos[id]; ok {
			found = append(found, rowPlace{int32(j), int32(i)})
		} else {
			e.absent = append(e.absent, int32(i))
		}
	}
	slices.SortFunc(found, func(a, b rowPlace) int { return int(a.row - b.row) })
	e.rows, e.places = make([]int32, len(found)), make([]int32, len(found))
	for k, f := range found {
		e.rows[k], e.places[k] = f.row, f.place
	}
	return e
}

var _ driver.Scorer = (*Index)(nil)

// parallelMin is the number of points per goroutine below which a scan
// stays on one goroutine.
const parallelMin = 32768

// scoresParallelMin is parallelMin for Scores, which keeps no heap: the
// 22,000 candidates of a kind at 46,000 entities take 1.3-1.6 ms on two
// cores instead of 2.7-3.0 ms on one, 16-bit rows
// (BenchmarkSearch/n=100000/scores22000).
const scoresParallelMin = 4096

// normalize writes v/|v| into dst.
func normalize(dst, v []float32) {
	var sum float64
	for _, c := range v {
		sum += float64(c) * float64(c)
	}
	inv := 1 / math.Sqrt(sum)
	for i, c := range v {
		dst[i] = float32(float64(c) * inv)
	}
}

var errDims = fmt.Errorf("embeddedindex: options need dimensions > 0: %w", vectorindex.ErrInvalidArgument)

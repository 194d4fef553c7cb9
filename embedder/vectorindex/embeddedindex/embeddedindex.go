// Package embeddedindex is the embedded vector index backend: exact cosine
// similarity over vectors held in memory.
//
// Vectors are L2-normalised on insert and kept in one contiguous []float32,
// so a search is a dot product per candidate and a bounded heap. A Filter's
// IDs restrict the scan to those candidates first; keyword, range and bool
// conditions are then evaluated on the payload. Nothing is persisted: the
// storage package keeps the vectors in Badger and loads them at start
// through Upsert.
//
// Searches run concurrently under a read lock; a write takes the lock
// exclusively, after normalising its vectors outside it.
package embeddedindex

import (
	"context"
	"fmt"
	"maps"
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
	vecs     []float32 // len(ids)*dims, row i is point i, unit length
	payloads []driver.Payload
	pos      map[string]int
}

var _ driver.Index = (*Index)(nil)

// New returns an empty driver for vectors of dims dimensions.
func New(dims int) *Index {
	return &Index{dims: dims, pos: make(map[string]int)}
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

// Upsert inserts or replaces points. Vectors are normalised and payloads
// copied before the lock is taken, so searches wait only for the copy in.
func (x *Index) Upsert(ctx context.Context, points []driver.Point) error {
	buf := make([]float32, len(points)*x.dims)
	pls := make([]driver.Payload, len(points))
	for i := range points {
		normalize(buf[i*x.dims:(i+1)*x.dims], points[i].Vector)
		pls[i] = clonePayload(points[i].Payload)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if fresh := len(points); cap(x.ids)-len(x.ids) < fresh {
		// Grow once for a bulk load instead of doubling repeatedly.
		x.ids = slices.Grow(x.ids, fresh)
		x.payloads = slices.Grow(x.payloads, fresh)
		x.vecs = slices.Grow(x.vecs, fresh*x.dims)
	}
	for i := range points {
		row := buf[i*x.dims : (i+1)*x.dims]
		if j, ok := x.pos[points[i].ID]; ok {
			copy(x.vecs[j*x.dims:(j+1)*x.dims], row)
			x.payloads[j] = pls[i]
			continue
		}
		x.pos[points[i].ID] = len(x.ids)
		x.ids = append(x.ids, points[i].ID)
		x.payloads = append(x.payloads, pls[i])
		x.vecs = append(x.vecs, row...)
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
		last := len(x.ids) - 1
		if j != last {
			x.ids[j] = x.ids[last]
			x.payloads[j] = x.payloads[last]
			copy(x.vecs[j*x.dims:(j+1)*x.dims], x.vecs[last*x.dims:])
			x.pos[x.ids[j]] = j
		}
		x.ids[last] = ""
		x.payloads[last] = driver.Payload{}
		x.ids = x.ids[:last]
		x.payloads = x.payloads[:last]
		x.vecs = x.vecs[:last*x.dims]
		delete(x.pos, id)
	}
	return nil
}

// IDs returns the IDs of the points that match f.
func (x *Index) IDs(ctx context.Context, f *driver.Filter) ([]string, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	keep := func(j int) bool { return f == nil || matches(&x.payloads[j], f) }
	var out []string
	if f != nil && f.IDs != nil {
		seen := make(map[int]struct{}, len(f.IDs))
		for _, id := range f.IDs {
			j, ok := x.pos[id]
			if _, dup := seen[j]; !ok || dup {
				continue
			}
			seen[j] = struct{}{}
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
	x.ids, x.vecs, x.payloads, x.pos = nil, nil, nil, map[string]int{}
	return nil
}

// checkEvery is how many candidates a search scores between context checks.
const checkEvery = 16384

// Search scores the candidates (f.IDs, or every point) that pass the payload
// conditions and keeps the best limit in a min-heap.
func (x *Index) Search(ctx context.Context, vector []float32, f *driver.Filter, limit int) ([]driver.Hit, error) {
	q := make([]float32, x.dims)
	normalize(q, vector)
	payloadFilter := f != nil && (len(f.Keywords) > 0 || len(f.Ranges) > 0 || len(f.Bools) > 0)

	x.mu.RLock()
	defer x.mu.RUnlock()
	h := topK{k: limit}
	if f != nil && f.IDs != nil {
		seen := make(map[int]struct{}, len(f.IDs))
		for _, id := range f.IDs {
			j, ok := x.pos[id]
			if !ok {
				continue
			}
			if _, dup := seen[j]; dup {
				continue
			}
			seen[j] = struct{}{}
			if payloadFilter && !matches(&x.payloads[j], f) {
				continue
			}
			h.offer(j, dot(q, x.vecs[j*x.dims:(j+1)*x.dims]), x.ids)
		}
		return h.sorted(x.ids), nil
	}
	// scan scores points [lo, hi) into t, checking ctx now and then.
	scan := func(t *topK, lo, hi int) {
		d := x.dims
		for j := lo; j < hi; j++ {
			if j%checkEvery == checkEvery-1 && ctx.Err() != nil {
				return
			}
			if payloadFilter && !matches(&x.payloads[j], f) {
				continue
			}
			s := dot(q, x.vecs[j*d:(j+1)*d])
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

// parallelMin is the number of points per goroutine below which a scan
// stays on one goroutine.
const parallelMin = 32768

func matches(p *driver.Payload, f *driver.Filter) bool {
	for field, want := range f.Keywords {
		have, ok := p.Keywords[field]
		if !ok || !slices.ContainsFunc(have, func(v string) bool { return slices.Contains(want, v) }) {
			return false
		}
	}
	for field, r := range f.Ranges {
		v, ok := p.Numbers[field]
		if !ok || (r.Min != nil && v < *r.Min) || (r.Max != nil && v > *r.Max) {
			return false
		}
	}
	for field, want := range f.Bools {
		v, ok := p.Bools[field]
		if !ok || v != want {
			return false
		}
	}
	return true
}

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

func clonePayload(p driver.Payload) driver.Payload {
	var c driver.Payload
	if len(p.Keywords) > 0 {
		c.Keywords = make(map[string][]string, len(p.Keywords))
		for k, v := range p.Keywords {
			c.Keywords[k] = slices.Clone(v)
		}
	}
	if len(p.Numbers) > 0 {
		c.Numbers = maps.Clone(p.Numbers)
	}
	if len(p.Bools) > 0 {
		c.Bools = maps.Clone(p.Bools)
	}
	return c
}

var errDims = fmt.Errorf("embeddedindex: options need dimensions > 0: %w", vectorindex.ErrInvalidArgument)

// Package vectorindex is LoreKeeper's vector index: a portable Index over a
// backend driver (package driver), with an embedded exact backend
// (embeddedindex) and a Qdrant backend (qdrantindex).
//
// Index validates every call (dimensions, vectors, IDs, filters against the
// field schema) the same way whatever the backend, classifies backend errors
// into the sentinels of this package and records metrics, so the drivers
// behave alike; vectorindextest holds the contract both satisfy.
package vectorindex

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"lorekeeper.dev/embedder/vectorindex/driver"
)

// The data types are the driver's, so that no call copies them.
type (
	// Point is a vector with its entity key and payload.
	Point = driver.Point
	// Payload holds a point's filterable attributes.
	Payload = driver.Payload
	// Range is an inclusive numeric range; a nil bound is open.
	Range = driver.Range
	// Filter restricts a search; all its conditions must hold.
	Filter = driver.Filter
	// Hit is a search result: cosine similarity (within 2e-3), highest
	// first.
	Hit = driver.Hit
	// FieldSchema declares a payload field filters use.
	FieldSchema = driver.FieldSchema
	// FieldType is a payload field's type.
	FieldType = driver.FieldType
)

// Payload field types.
const (
	FieldKeyword = driver.FieldKeyword
	FieldNumber  = driver.FieldNumber
	FieldBool    = driver.FieldBool
)

// Options configure an Index. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Dimensions is the vector length. Zero means the driver's; a value that
	// differs from the driver's makes New panic.
	Dimensions int
	// Model names the embedding model that made the vectors; the Qdrant
	// backend names its collection after it ("lorekeeper_<model>").
	Model string
	// Fields is the payload schema. When set, filters may use only these
	// fields, with conditions of their type, and payload values must have
	// the declared type. Backends index these fields before loading.
	Fields []FieldSchema
	// Metrics records search latency, upserts, points and errors; nil
	// records nothing.
	Metrics *Metrics
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Index is a vector index over a backend driver. It is safe for concurrent
// use; the embedded backend serves concurrent searches during writes.
type Index struct {
	d       driver.Index
	dims    int
	backend string
	fields  map[string]FieldType // nil: no schema, any field goes
	metrics *Metrics
	logger  *slog.Logger
	closed  atomic.Bool
}

// New returns an Index over d. It panics if opts.Dimensions is set and
// differs from d.Dimensions(), or if d.Dimensions() is not positive: both are
// programming errors.
func New(d driver.Index, opts *Options) *Index {
	if opts == nil {
		opts = &Options{}
	}
	dims := d.Dimensions()
	if dims <= 0 {
		panic(fmt.Sprintf("vectorindex: driver %s has %d dimensions", d.Backend(), dims))
	}
	if opts.Dimensions != 0 && opts.Dimensions != dims {
		panic(fmt.Sprintf("vectorindex: options ask %d dimensions, driver %s has %d", opts.Dimensions, d.Backend(), dims))
	}
	x := &Index{d: d, dims: dims, backend: d.Backend(), metrics: opts.Metrics, logger: opts.Logger}
	if x.metrics != nil {
		// A closed set of operations: export each at zero, so an error
		// ratio reads 0 rather than no data.
		for _, op := range []string{"upsert", "delete", "search", "ids", "count"} {
			x.metrics.errors.WithLabelValues(x.backend, op)
		}
	}
	if x.logger == nil {
		x.logger = slog.Default()
	}
	if opts.Fields != nil {
		x.fields = make(map[string]FieldType, len(opts.Fields))
		for _, f := range opts.Fields {
			x.fields[f.Name] = f.Type
		}
	}
	return x
}

// ValidateFields checks a payload schema: non-empty unique names that do not
// start with "_" (reserved for backends) and known types. Driver
// constructors call it.
func ValidateFields(fields []FieldSchema) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if err := validateFieldName(f.Name); err != nil {
			return err
		}
		if seen[f.Name] {
			return fmt.Errorf("field %q declared twice: %w", f.Name, ErrInvalidArgument)
		}
		seen[f.Name] = true
		if f.Type < FieldKeyword || f.Type > FieldBool {
			return fmt.Errorf("field %q has unknown type %d: %w", f.Name, f.Type, ErrInvalidArgument)
		}
	}
	return nil
}

func validateFieldName(name string) error {
	if name == "" || strings.HasPrefix(name, "_") {
		return fmt.Errorf("field name %q is empty or starts with '_': %w", name, ErrInvalidArgument)
	}
	return nil
}

// Backend names the backend: "embedded" or "qdrant".
func (x *Index) Backend() string { return x.backend }

// Dimensions is the vector length.
func (x *Index) Dimensions() int { return x.dims }

// Upsert inserts or replaces the points by ID; it is idempotent. Within one
// call a repeated ID keeps its last point. The points are not retained:
// callers may reuse them afterwards.
func (x *Index) Upsert(ctx context.Context, points []Point) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	if len(points) == 0 {
		return nil
	}
	seen := make(map[string]int, len(points))
	dup := false
	for i := range points {
		p := &points[i]
		if p.ID == "" {
			return fmt.Errorf("upsert point %d: empty id: %w", i, ErrInvalidArgument)
		}
		if err := x.checkVector(p.Vector); err != nil {
			return fmt.Errorf("upsert %q: %w", p.ID, err)
		}
		if err := x.checkPayload(&p.Payload); err != nil {
			return fmt.Errorf("upsert %q: %w", p.ID, err)
		}
		if _, ok := seen[p.ID]; ok {
			dup = true
		}
		seen[p.ID] = i
	}
	if dup {
		// Keep the last point of each ID, in first-seen order.
		uniq := make([]Point, 0, len(seen))
		for i := range points {
			if seen[points[i].ID] == i {
				uniq = append(uniq, points[i])
			}
		}
		points = uniq
	}
	if err := x.d.Upsert(ctx, points); err != nil {
		return x.fail(ctx, "upsert", err)
	}
	if x.metrics != nil {
		x.metrics.upserts.WithLabelValues(x.backend).Add(float64(len(points)))
		x.refreshPoints(ctx)
	}
	return nil
}

// Delete removes the points; deleting a missing ID is not an error.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if id == "" {
			return fmt.Errorf("delete: empty id: %w", ErrInvalidArgument)
		}
	}
	if err := x.d.Delete(ctx, ids); err != nil {
		return x.fail(ctx, "delete", err)
	}
	if x.metrics != nil {
		x.refreshPoints(ctx)
	}
	return nil
}

// Search returns up to limit points that match f (nil: all points), by
// cosine similarity to vector, highest first. A Filter with non-nil empty
// IDs matches nothing.
func (x *Index) Search(ctx context.Context, vector []float32, f *Filter, limit int) ([]Hit, error) {
	if err := x.check(ctx); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, fmt.Errorf("search: limit %d: %w", limit, ErrInvalidArgument)
	}
	if err := x.checkVector(vector); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if f != nil {
		if err := x.checkFilter(f); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if f.IDs != nil && len(f.IDs) == 0 {
			return nil, nil
		}
	}
	start := time.Now()
	hits, err := x.d.Search(ctx, vector, f, limit)
	if err != nil {
		return nil, x.fail(ctx, "search", err)
	}
	if x.metrics != nil {
		x.metrics.searchDuration.WithLabelValues(x.backend).Observe(time.Since(start).Seconds())
	}
	return hits, nil
}

// Scores returns the cosine similarity of vector to each point of ids, in
// the order of ids: NaN for an ID the index does not hold. It is a search
// restricted to ids that keeps them all, without ranking them, for callers
// that score every candidate themselves: the scores Search gives. Drivers
// without the driver.Scorer capability answer through Search. The scores
// go into buf when it has room (a caller's buffer, reused call after
// call: tens of thousands of candidates a query), else a new slice.
func (x *Index) Scores(ctx context.Context, vector []float32, ids []string, buf []float32) ([]float32, error) {
	if err := x.check(ctx); err != nil {
		return nil, err
	}
	if err := x.checkVector(vector); err != nil {
		return nil, fmt.Errorf("scores: %w", err)
	}
	for _, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("scores: empty id: %w", ErrInvalidArgument)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	start := time.Now()
	out := buf[:0]
	if cap(out) < len(ids) {
		out = make([]float32, len(ids))
	}
	out = out[:len(ids)]
	if sc, ok := x.d.(driver.Scorer); ok {
		if err := sc.Scores(ctx, vector, ids, out); err != nil {
			return nil, x.fail(ctx, "search", err)
		}
	} else {
		hits, err := x.d.Search(ctx, vector, &Filter{IDs: ids}, len(ids))
		if err != nil {
			return nil, x.fail(ctx, "search", err)
		}
		byID := make(map[string]float32, len(hits))
		for _, h := range hits {
			byID[h.ID] = h.Score
		}
		for i, id := range ids {
			s, ok := byID[id]
			if !ok {
				s = float32(math.NaN())
			}
			out[i] = s
		}
	}
	if x.metrics != nil {
		x.metrics.searchDuration.WithLabelValues(x.backend).Observe(time.Since(start).Seconds())
	}
	return out, nil
}

// IDs returns the IDs of the points that match f (nil: all), in no
// particular order: a scroll, for reconciling the index with the documents.
func (x *Index) IDs(ctx context.Context, f *Filter) ([]string, error) {
	if err := x.check(ctx); err != nil {
		return nil, err
	}
	if f != nil {
		if err := x.checkFilter(f); err != nil {
			return nil, fmt.Errorf("ids: %w", err)
		}
		if f.IDs != nil && len(f.IDs) == 0 {
			return nil, nil
		}
	}
	ids, err := x.d.IDs(ctx, f)
	if err != nil {
		return nil, x.fail(ctx, "ids", err)
	}
	return ids, nil
}

// Count returns the number of points.
func (x *Index) Count(ctx context.Context) (int, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	n, err := x.d.Count(ctx)
	if err != nil {
		return 0, x.fail(ctx, "count", err)
	}
	if x.metrics != nil {
		x.metrics.points.WithLabelValues(x.backend).Set(float64(n))
	}
	return n, nil
}

// Close closes the driver. It does not close what the caller lent the
// driver (a Qdrant client, for instance). Later calls return ErrClosed.
func (x *Index) Close() error {
	if x.closed.Swap(true) {
		return nil
	}
	if err := x.d.Close(); err != nil {
		return fmt.Errorf("vectorindex: close %s: %w", x.backend, err)
	}
	return nil
}

func (x *Index) check(ctx context.Context) error {
	if x.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

func (x *Index) refreshPoints(ctx context.Context) {
	if n, err := x.d.Count(ctx); err == nil {
		x.metrics.points.WithLabelValues(x.backend).Set(float64(n))
	}
}

// fail classifies a driver error. Context errors return unwrapped when the
// caller's context ended, as every ctx-taking call in the project does.
func (x *Index) fail(ctx context.Context, op string, err error) error {
	if err := ctx.Err(); err != nil {
		return err // the caller gave up: not a backend error
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// The backend saw the caller's deadline pass a moment before ctx did.
		return context.DeadlineExceeded
	}
	if x.metrics != nil {
		x.metrics.errors.WithLabelValues(x.backend, op).Inc()
	}
	kind := classify(err)
	if kind == ErrUnavailable {
		x.logger.Warn("vector index backend unavailable", "backend", x.backend, "op", op, "err", err)
	}
	return &Error{Op: op, Backend: x.backend, Kind: kind, Err: err}
}

func (x *Index) checkVector(v []float32) error {
	if len(v) != x.dims {
		return fmt.Errorf("vector has %d dimensions, index has %d: %w", len(v), x.dims, ErrDimensionMismatch)
	}
	var sum float64
	for _, c := range v {
		f := float64(c)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("vector has a non-finite component: %w", ErrInvalidArgument)
		}
		sum += f * f
	}
	if sum == 0 {
		return fmt.Errorf("zero vector has no direction: %w", ErrInvalidArgument)
	}
	return nil
}

func (x *Index) checkPayload(p *Payload) error {
	check := func(name string, t FieldType) error {
		if err := validateFieldName(name); err != nil {
			return err
		}
		if x.fields == nil {
			return nil
		}
		if want, ok := x.fields[name]; ok && want != t {
			return fmt.Errorf("payload field %q is a %s, schema says %s: %w", name, t, want, ErrInvalidArgument)
		}
		return nil
	}
	for k := range p.Keywords {
		if err := check(k, FieldKeyword); err != nil {
			return err
		}
	}
	for k, v := range p.Numbers {
		if err := check(k, FieldNumber); err != nil {
			return err
		}
		if _, dup := p.Keywords[k]; dup {
			return fmt.Errorf("payload field %q has two types: %w", k, ErrInvalidArgument)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("payload field %q is not finite: %w", k, ErrInvalidArgument)
		}
	}
	for k := range p.Bools {
		if err := check(k, FieldBool); err != nil {
			return err
		}
		_, dupK := p.Keywords[k]
		_, dupN := p.Numbers[k]
		if dupK || dupN {
			return fmt.Errorf("payload field %q has two types: %w", k, ErrInvalidArgument)
		}
	}
	return nil
}

func (x *Index) checkFilter(f *Filter) error {
	check := func(name string, t FieldType) error {
		if x.fields == nil {
			if err := validateFieldName(name); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidFilter, err)
			}
			return nil
		}
		want, ok := x.fields[name]
		if !ok {
			return fmt.Errorf("field %q is not in the schema: %w", name, ErrInvalidFilter)
		}
		if want != t {
			return fmt.Errorf("field %q is a %s, filtered as %s: %w", name, want, t, ErrInvalidFilter)
		}
		return nil
	}
	for _, id := range f.IDs {
		if id == "" {
			return fmt.Errorf("empty id in filter: %w", ErrInvalidFilter)
		}
	}
	for k, vals := range f.Keywords {
		if err := check(k, FieldKeyword); err != nil {
			return err
		}
		if len(vals) == 0 {
			return fmt.Errorf("field %q lists no values: %w", k, ErrInvalidFilter)
		}
	}
	for k, r := range f.Ranges {
		if err := check(k, FieldNumber); err != nil {
			return err
		}
		if r.Min == nil && r.Max == nil {
			return fmt.Errorf("field %q has a range with no bounds: %w", k, ErrInvalidFilter)
		}
		if (r.Min != nil && math.IsNaN(*r.Min)) || (r.Max != nil && math.IsNaN(*r.Max)) {
			return fmt.Errorf("field %q has a NaN bound: %w", k, ErrInvalidFilter)
		}
	}
	for k := range f.Bools {
		if err := check(k, FieldBool); err != nil {
			return err
		}
	}
	return nil
}

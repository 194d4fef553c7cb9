// Package driver defines the interface a vector index backend implements.
//
// The portable type vectorindex.Index sits on top of it: it validates input
// (dimensions, finite non-zero vectors, unique IDs, filters against the field
// schema), classifies errors and records metrics, so a driver only does the
// work. Drivers make one batch call per method, never retry, and return raw
// errors (gRPC status errors, for instance); they must not wrap them in
// vectorindex sentinels.
package driver

import "context"

// FieldType is the type of a payload field.
type FieldType int

// Payload field types.
const (
	// FieldKeyword is a string field with any number of values; a Filter
	// keyword condition matches when any value equals any wanted value.
	FieldKeyword FieldType = iota + 1
	// FieldNumber is a float64 field; Filter ranges apply to it.
	FieldNumber
	// FieldBool is a boolean field.
	FieldBool
)

// String returns "keyword", "number" or "bool".
func (t FieldType) String() string {
	switch t {
	case FieldKeyword:
		return "keyword"
	case FieldNumber:
		return "number"
	case FieldBool:
		return "bool"
	}
	return "unknown"
}

// FieldSchema declares a payload field that filters use, so a backend can
// index it before loading (Qdrant payload indexes).
type FieldSchema struct {
	Name string
	Type FieldType
}

// Payload holds the filterable attributes of a point, by type. A field name
// appears in at most one of the maps.
type Payload struct {
	Keywords map[string][]string
	Numbers  map[string]float64
	Bools    map[string]bool
}

// Point is a vector with its entity key and payload.
type Point struct {
	// ID is the entity key, e.g. "open5e_v2:srd-2014:spell:fireball".
	ID      string
	Vector  []float32
	Payload Payload
}

// Range is an inclusive numeric range; a nil bound is open.
type Range struct {
	Min, Max *float64
}

// Filter restricts a search. All its conditions must hold. A point that lacks
// a filtered field does not match.
type Filter struct {
	// IDs, when non-nil, restricts the search to these points: the
	// candidates the structured filters selected.
	IDs []string
	// Keywords maps a field to the values it may take: any of them matches.
	Keywords map[string][]string
	// Ranges maps a number field to its inclusive range.
	Ranges map[string]Range
	// Bools maps a bool field to its wanted value.
	Bools map[string]bool
}

// Hit is a search result: cosine similarity, in [-1, 1], highest first. A
// driver may approximate it within 2e-3: the embedded one keeps vectors of
// 256 or more dimensions in 8 bits per component (within 1.1e-3 for the
// embedding model's, 1.3e-4 typically), fewer in 16 bits (within 2e-5
// typically).
type Hit struct {
	ID    string
	Score float32
}

// Index is a vector index backend.
//
// The portable type guarantees what a driver receives: vectors of exactly
// Dimensions() finite components with a non-zero norm, non-empty IDs, no
// duplicate IDs in one Upsert call, limit > 0, a Filter whose IDs are nil or
// non-empty and whose fields are valid for the schema.
type Index interface {
	// Backend names the backend for metrics and logs: "embedded", "qdrant".
	Backend() string
	// Dimensions is the vector length the index was opened with.
	Dimensions() int
	// Upsert inserts or replaces the points, by ID.
	Upsert(ctx context.Context, points []Point) error
	// Delete removes the points; missing IDs are ignored.
	Delete(ctx context.Context, ids []string) error
	// Search returns up to limit points matching f (nil: all), by cosine
	// similarity to vector, highest first.
	Search(ctx context.Context, vector []float32, f *Filter, limit int) ([]Hit, error)
	// IDs returns the IDs of the points that match f (nil: all), in no
	// particular order; the Qdrant driver scrolls page by page.
	IDs(ctx context.Context, f *Filter) ([]string, error)
	// Count returns the number of points.
	Count(ctx context.Context) (int, error)
	// Close releases what the driver itself created.
	Close() error
}

// Scorer is an optional capability of a driver: the similarity of given
// points to a vector, in the order given, without ranking them. A caller
// that scores every candidate (the query service's hybrid ranking) then
// pays for no sort and no lookup of hits by ID. The portable Index falls
// back to Search for drivers without it.
type Scorer interface {
	// Scores sets out[i] to the cosine similarity of vector and point
	// ids[i] (as Search scores it), or NaN when the index has no such
	// point. len(out) == len(ids).
	Scores(ctx context.Context, vector []float32, ids []string, out []float32) error
}

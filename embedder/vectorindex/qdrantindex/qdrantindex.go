// Package qdrantindex is the Qdrant vector index backend, over the official
// Go client (github.com/qdrant/go-client).
//
// One collection per embedding model ("lorekeeper_<model>"), cosine distance,
// created when absent; an existing collection with other dimensions is an
// error. Every payload field of the schema gets a payload index before any
// point is loaded. Point IDs are UUIDs derived from the entity key (UUIDv5
// style), and the key itself is kept in the payload under "_key" to map hits
// back. Writes wait for Qdrant to apply them.
//
// The driver returns the client's errors unclassified; vectorindex.Index
// classifies them (Unavailable and DeadlineExceeded are ErrUnavailable, a
// missing collection ErrNotFound).
package qdrantindex

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
)

// Backend is the name the Qdrant backend reports.
const Backend = "qdrant"

// KeyField is the payload field holding the entity key.
const KeyField = "_key"

// Options configure the driver. A nil *Options is invalid: Dimensions is
// required.
type Options struct {
	// Collection overrides the collection name; default CollectionName(Model).
	Collection string
	// Model names the embedding model; it names the collection.
	Model string
	// Dimensions of the vectors; required.
	Dimensions int
	// Fields get payload indexes before loading.
	Fields []driver.FieldSchema
	// Exact asks Qdrant for an exact (full scan) search instead of HNSW.
	Exact bool
	// BatchSize is the number of points per Upsert or Delete request;
	// default 256.
	BatchSize int
	// Timeout bounds each call whose context has no deadline; default 30s.
	// A Qdrant that hangs then fails with ErrUnavailable instead of
	// blocking the caller for ever.
	Timeout time.Duration
}

// Index is the Qdrant driver.
type Index struct {
	client     *qdrant.Client
	collection string
	dims       int
	exact      bool
	batch      int
	timeout    time.Duration
}

var _ driver.Index = (*Index)(nil)

// CollectionName returns "lorekeeper_<model>", the model's name with every
// character other than letters, digits, '-' and '_' replaced by '_'.
func CollectionName(model string) string {
	if model == "" {
		model = "default"
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, model)
	return "lorekeeper_" + clean
}

// namespace is the UUIDv5 namespace of LoreKeeper entity keys (itself a
// random UUID, fixed forever: changing it would orphan every stored point).
var namespace = [16]byte{0x6b, 0x1e, 0x5c, 0x2a, 0x9d, 0x4f, 0x4e, 0x8b, 0xa0, 0x37, 0x1c, 0x52, 0xe4, 0x0d, 0x7f, 0x91}

// PointID returns the UUID the driver stores key under: SHA-1 of the
// namespace and the key, with the version 5 and RFC 4122 variant bits set.
func PointID(key string) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(key))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// ErrCollectionDistance is returned when an existing collection does not use cosine distance.
var ErrCollectionDistance = errors.New("qdrantindex: collection distance is not cosine")

// New opens the driver on client, which the caller keeps and closes: it
// creates the collection if absent (cosine, opts.Dimensions), checks an
// existing one's dimensions (vectorindex.ErrDimensionMismatch) and creates
// the payload indexes of opts.Fields.
func New(ctx context.Context, client *qdrant.Client, opts *Options) (*Index, error) {
	if opts == nil || opts.Dimensions <= 0 {
		return nil, fmt.Errorf("qdrantindex: options need dimensions > 0: %w", vectorindex.ErrInvalidArgument)
	}
	if err := vectorindex.ValidateFields(opts.Fields); err != nil {
		return nil, err
	}
	x := &Index{client: client, collection: opts.Collection, dims: opts.Dimensions, exact: opts.Exact, batch: opts.BatchSize}
	if x.collection == "" {
		x.collection = CollectionName(opts.Model)
	}
	if x.batch <= 0 {
		x.batch = 256
	}
	x.timeout = opts.Timeout
	if x.timeout <= 0 {
		x.timeout = 30 * time.Second
	}
	ctx, cancel := x.bound(ctx)
	defer cancel()
	if err := x.ensureCollection(ctx); err != nil {
		return nil, err
	}
	for _, f := range opts.Fields {
		if err := x.createFieldIndex(ctx, f); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Open opens a portable index on client with opts.Model, opts.Dimensions
// (required) and opts.Fields.
func Open(ctx context.Context, client *qdrant.Client, opts *vectorindex.Options) (*vectorindex.Index, error) {
	if opts == nil {
		opts = &vectorindex.Options{}
	}
	d, err := New(ctx, client, &Options{Model: opts.Model, Dimensions: opts.Dimensions, Fields: opts.Fields})
	if err != nil {
		return nil, err
	}
	return vectorindex.New(d, opts), nil
}

// bound applies the default timeout when ctx has no deadline.
func (x *Index) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, x.timeout)
}

func (x *Index) ensureCollection(ctx context.Context) error {
	exists, err := x.client.CollectionExists(ctx, x.collection)
	if err != nil {
		return vectorindex.NewError("open", Backend, err)
	}
	if !exists {
		err := x.client.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: x.collection,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{
				Size:     uint64(x.dims),
				Distance: qdrant.Distance_Cosine,
			}),
		})
		if err == nil {
			return nil
		}
		// Another node may have created it meanwhile: check it below.
		if again, err2 := x.client.CollectionExists(ctx, x.collection); err2 != nil || !again {
			return vectorindex.NewError("open", Backend, err)
		}
	}
	info, err := x.client.GetCollectionInfo(ctx, x.collection)
	if err != nil {
		return vectorindex.NewError("open", Backend, err)
	}
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
	if params == nil {
		return fmt.Errorf("qdrantindex: collection %q has named vectors, want one unnamed vector: %w", x.collection, vectorindex.ErrDimensionMismatch)
	}
	if got := params.GetSize(); got != uint64(x.dims) {
		return fmt.Errorf("qdrantindex: collection %q has %d dimensions, want %d: %w", x.collection, got, x.dims, vectorindex.ErrDimensionMismatch)
	}
	if d := params.GetDistance(); d != qdrant.Distance_Cosine {
		return fmt.Errorf("qdrantindex: collection %q uses %s distance: %w", x.collection, d, ErrCollectionDistance)
	}
	return nil
}

func (x *Index) createFieldIndex(ctx context.Context, f driver.FieldSchema) error {
	var t qdrant.FieldType
	switch f.Type {
	case driver.FieldKeyword:
		t = qdrant.FieldType_FieldTypeKeyword
	case driver.FieldNumber:
		t = qdrant.FieldType_FieldTypeFloat
	case driver.FieldBool:
		t = qdrant.FieldType_FieldTypeBool
	}
	_, err := x.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
		CollectionName: x.collection,
		Wait:           qdrant.PtrOf(true),
		FieldName:      f.Name,
		FieldType:      qdrant.PtrOf(t),
	})
	if err != nil {
		return vectorindex.NewError("open", Backend, fmt.Errorf("payload index %q: %w", f.Name, err))
	}
	return nil
}

// Collection returns the collection name.
func (x *Index) Collection() string { return x.collection }

// Backend returns "qdrant".
func (x *Index) Backend() string { return Backend }

// Dimensions returns the vector length.
func (x *Index) Dimensions() int { return x.dims }

// Upsert writes the points in batches, waiting for each to be applied.
func (x *Index) Upsert(ctx context.Context, points []driver.Point) error {
	ctx, cancel := x.bound(ctx)
	defer cancel()
	for start := 0; start < len(points); start += x.batch {
		chunk := points[start:min(start+x.batch, len(points))]
		ps := make([]*qdrant.PointStruct, len(chunk))
		for i, p := range chunk {
			ps[i] = &qdrant.PointStruct{
				Id:      qdrant.NewIDUUID(PointID(p.ID)),
				Vectors: qdrant.NewVectorsDense(p.Vector),
				Payload: payload(p.ID, p.Payload),
			}
		}
		if _, err := x.client.Upsert(ctx, &qdrant.UpsertPoints{
			CollectionName: x.collection,
			Wait:           qdrant.PtrOf(true),
			Points:         ps,
		}); err != nil {
			return err
		}
	}
	return nil
}

func payload(key string, p driver.Payload) map[string]*qdrant.Value {
	m := make(map[string]*qdrant.Value, 1+len(p.Keywords)+len(p.Numbers)+len(p.Bools))
	m[KeyField] = qdrant.NewValueString(key)
	for k, vs := range p.Keywords {
		list := make([]*qdrant.Value, len(vs))
		for i, v := range vs {
			list[i] = qdrant.NewValueString(v)
		}
		m[k] = qdrant.NewValueFromList(list...)
	}
	for k, v := range p.Numbers {
		m[k] = qdrant.NewValueDouble(v)
	}
	for k, v := range p.Bools {
		m[k] = qdrant.NewValueBool(v)
	}
	return m
}

// Delete removes points by ID in batches; Qdrant ignores missing IDs.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	ctx, cancel := x.bound(ctx)
	defer cancel()
	for start := 0; start < len(ids); start += x.batch {
		chunk := ids[start:min(start+x.batch, len(ids))]
		if _, err := x.client.Delete(ctx, &qdrant.DeletePoints{
			CollectionName: x.collection,
			Wait:           qdrant.PtrOf(true),
			Points:         qdrant.NewPointsSelector(pointIDs(chunk)...),
		}); err != nil {
			return err
		}
	}
	return nil
}

func pointIDs(keys []string) []*qdrant.PointId {
	out := make([]*qdrant.PointId, len(keys))
	for i, k := range keys {
		out[i] = qdrant.NewIDUUID(PointID(k))
	}
	return out
}

// Search runs a nearest-neighbour query with the filter as "must"
// conditions; the IDs restriction is a HasId condition.
func (x *Index) Search(ctx context.Context, vector []float32, f *driver.Filter, limit int) ([]driver.Hit, error) {
	ctx, cancel := x.bound(ctx)
	defer cancel()
	req := &qdrant.QueryPoints{
		CollectionName: x.collection,
		Query:          qdrant.NewQueryDense(vector),
		Filter:         toFilter(f),
		Limit:          qdrant.PtrOf(uint64(limit)),
		WithPayload:    qdrant.NewWithPayloadInclude(KeyField),
	}
	if x.exact {
		req.Params = &qdrant.SearchParams{Exact: qdrant.PtrOf(true)}
	}
	res, err := x.client.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := make([]driver.Hit, 0, len(res))
	for _, p := range res {
		key := p.GetPayload()[KeyField].GetStringValue()
		if key == "" {
			continue // not a LoreKeeper point
		}
		hits = append(hits, driver.Hit{ID: key, Score: p.GetScore()})
	}
	return hits, nil
}

func toFilter(f *driver.Filter) *qdrant.Filter {
	if f == nil {
		return nil
	}
	var must []*qdrant.Condition
	if f.IDs != nil {
		must = append(must, qdrant.NewHasID(pointIDs(f.IDs)...))
	}
	for k, vs := range f.Keywords {
		must = append(must, qdrant.NewMatchKeywords(k, vs...))
	}
	for k, r := range f.Ranges {
		must = append(must, qdrant.NewRange(k, &qdrant.Range{Gte: r.Min, Lte: r.Max}))
	}
	for k, v := range f.Bools {
		must = append(must, qdrant.NewMatchBool(k, v))
	}
	if len(must) == 0 {
		return nil
	}
	return &qdrant.Filter{Must: must}
}

// scrollPage is the number of points per Scroll request.
const scrollPage = 1000

// IDs scrolls through the points that match f, page by page, and returns
// their keys.
func (x *Index) IDs(ctx context.Context, f *driver.Filter) ([]string, error) {
	ctx, cancel := x.bound(ctx)
	defer cancel()
	var out []string
	var offset *qdrant.PointId
	for {
		pts, next, err := x.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: x.collection,
			Filter:         toFilter(f),
			Offset:         offset,
			Limit:          qdrant.PtrOf(uint32(scrollPage)),
			WithPayload:    qdrant.NewWithPayloadInclude(KeyField),
		})
		if err != nil {
			return nil, err
		}
		for _, p := range pts {
			if key := p.GetPayload()[KeyField].GetStringValue(); key != "" {
				out = append(out, key)
			}
		}
		if next == nil || len(pts) == 0 {
			return out, nil
		}
		offset = next
	}
}

// Count returns the exact number of points.
func (x *Index) Count(ctx context.Context) (int, error) {
	ctx, cancel := x.bound(ctx)
	defer cancel()
	n, err := x.client.Count(ctx, &qdrant.CountPoints{CollectionName: x.collection, Exact: qdrant.PtrOf(true)})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// Close does nothing: the client belongs to the caller.
func (x *Index) Close() error { return nil }

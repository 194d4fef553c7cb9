package qdranttest

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

type pointsService struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

func done(wait bool) *qdrant.PointsOperationResponse {
	st := qdrant.UpdateStatus_Acknowledged
	if wait {
		st = qdrant.UpdateStatus_Completed
	}
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: st}}
}

// pointKey canonicalises a point ID: "n:<number>" or "u:<lower-case dashed uuid>".
func pointKey(id *qdrant.PointId) (string, error) {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		// Zero-padded so that keys sort as Qdrant orders IDs: numbers
		// first, by value, then UUIDs.
		return fmt.Sprintf("n:%020d", v.Num), nil
	case *qdrant.PointId_Uuid:
		h := strings.ReplaceAll(strings.ToLower(v.Uuid), "-", "")
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 16 {
			return "", status.Errorf(codes.InvalidArgument, "Unable to parse UUID: %s", v.Uuid)
		}
		return "u:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
	}
	return "", status.Error(codes.InvalidArgument, "Wrong input: point id is missing")
}

func denseVector(v *qdrant.Vector) ([]float32, error) {
	switch x := v.GetVector().(type) {
	case *qdrant.Vector_Dense:
		return x.Dense.GetData(), nil
	case nil:
		if v.GetIndices() == nil && v.GetVectorsCount() == 0 {
			return v.GetData(), nil // the deprecated flat form
		}
	}
	return nil, unimplemented("sparse, multi and inference vectors")
}

func (c *collection) prepare(v []float32) ([]float32, error) {
	if len(v) != c.size {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", c.size, len(v))
	}
	out := slices.Clone(v)
	if c.distance == qdrant.Distance_Cosine {
		var sum float64
		for _, f := range out {
			sum += float64(f) * float64(f)
		}
		if sum > 0 {
			inv := 1 / math.Sqrt(sum)
			for i := range out {
				out[i] = float32(float64(out[i]) * inv)
			}
		}
	}
	return out, nil
}

func (p *pointsService) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	if req.UpdateFilter != nil || req.ShardKeySelector != nil || req.GetUpdateMode() != qdrant.UpdateMode_Upsert {
		return nil, unimplemented("conditional upserts, shard keys and update modes")
	}
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	// Validate the whole batch before applying any of it.
	keys := make([]string, len(req.GetPoints()))
	vecs := make([][]float32, len(req.GetPoints()))
	for i, ps := range req.GetPoints() {
		if keys[i], err = pointKey(ps.GetId()); err != nil {
			return nil, err
		}
		vs, ok := ps.GetVectors().GetVectorsOptions().(*qdrant.Vectors_Vector)
		if !ok {
			return nil, unimplemented("named vectors")
		}
		raw, err := denseVector(vs.Vector)
		if err != nil {
			return nil, err
		}
		if vecs[i], err = col.prepare(raw); err != nil {
			return nil, err
		}
	}
	for i, ps := range req.GetPoints() {
		pl := make(map[string]*qdrant.Value, len(ps.GetPayload()))
		for k, v := range ps.GetPayload() {
			pl[k] = proto.Clone(v).(*qdrant.Value)
		}
		col.points[keys[i]] = &point{id: proto.Clone(ps.GetId()).(*qdrant.PointId), vector: vecs[i], payload: pl}
	}
	return done(req.GetWait()), nil
}

func (p *pointsService) Delete(_ context.Context, req *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	if req.ShardKeySelector != nil {
		return nil, unimplemented("shard keys")
	}
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	switch sel := req.GetPoints().GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		keys := make([]string, 0, len(sel.Points.GetIds()))
		for _, id := range sel.Points.GetIds() {
			k, err := pointKey(id)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		for _, k := range keys {
			delete(col.points, k)
		}
	case *qdrant.PointsSelector_Filter:
		var doomed []string
		for k, pt := range col.points {
			ok, err := matchFilter(sel.Filter, k, pt)
			if err != nil {
				return nil, err
			}
			if ok {
				doomed = append(doomed, k)
			}
		}
		for _, k := range doomed {
			delete(col.points, k)
		}
	default:
		return nil, status.Error(codes.InvalidArgument, "Wrong input: points selector is missing")
	}
	return done(req.GetWait()), nil
}

var schemaTypes = map[qdrant.FieldType]qdrant.PayloadSchemaType{
	qdrant.FieldType_FieldTypeKeyword:  qdrant.PayloadSchemaType_Keyword,
	qdrant.FieldType_FieldTypeInteger:  qdrant.PayloadSchemaType_Integer,
	qdrant.FieldType_FieldTypeFloat:    qdrant.PayloadSchemaType_Float,
	qdrant.FieldType_FieldTypeGeo:      qdrant.PayloadSchemaType_Geo,
	qdrant.FieldType_FieldTypeText:     qdrant.PayloadSchemaType_Text,
	qdrant.FieldType_FieldTypeBool:     qdrant.PayloadSchemaType_Bool,
	qdrant.FieldType_FieldTypeDatetime: qdrant.PayloadSchemaType_Datetime,
	qdrant.FieldType_FieldTypeUuid:     qdrant.PayloadSchemaType_Uuid,
}

// CreateFieldIndex records the field's type (the stand-in filters by scan,
// so an index changes no result, as in Qdrant).
func (p *pointsService) CreateFieldIndex(_ context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	if req.FieldType == nil {
		return nil, status.Error(codes.InvalidArgument, "Wrong input: field type is required")
	}
	t, ok := schemaTypes[req.GetFieldType()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: unknown field type %v", req.GetFieldType())
	}
	if req.GetFieldName() == "" {
		return nil, status.Error(codes.InvalidArgument, "Validation error: field name is empty")
	}
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	col.schema[req.GetFieldName()] = t
	return done(req.GetWait()), nil
}

func (p *pointsService) DeleteFieldIndex(_ context.Context, req *qdrant.DeleteFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	delete(col.schema, req.GetFieldName())
	return done(req.GetWait()), nil
}

func (p *pointsService) Count(_ context.Context, req *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	if req.ShardKeySelector != nil {
		return nil, unimplemented("shard keys")
	}
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var n uint64
	for k, pt := range col.points {
		ok, err := matchFilter(req.GetFilter(), k, pt)
		if err != nil {
			return nil, err
		}
		if ok {
			n++
		}
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: n}}, nil
}

type candidate struct {
	key   string
	pt    *point
	score float32
}

// Query answers nearest-neighbour queries (dense vector or point ID) and,
// without a query, lists points by ID, as Qdrant does.
func (p *pointsService) Query(_ context.Context, req *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	if len(req.GetPrefetch()) > 0 || req.GetUsing() != "" || req.LookupFrom != nil || req.ShardKeySelector != nil {
		return nil, unimplemented("prefetch, named vectors, lookup_from and shard keys")
	}
	if req.GetWithVectors().GetEnable() || req.GetWithVectors().GetInclude() != nil {
		return nil, unimplemented("with_vectors")
	}
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var q []float32
	if req.Query != nil {
		nearest, ok := req.GetQuery().GetVariant().(*qdrant.Query_Nearest)
		if !ok {
			return nil, unimplemented("query variants other than nearest")
		}
		switch in := nearest.Nearest.GetVariant().(type) {
		case *qdrant.VectorInput_Dense:
			q = in.Dense.GetData()
		case *qdrant.VectorInput_Id:
			k, err := pointKey(in.Id)
			if err != nil {
				return nil, err
			}
			pt, ok := col.points[k]
			if !ok {
				return nil, status.Errorf(codes.NotFound, "Not found: No point with id %s found", strings.TrimPrefix(k, "u:"))
			}
			q = pt.vector
		default:
			return nil, unimplemented("sparse, multi and inference query vectors")
		}
		if q, err = col.prepare(q); err != nil {
			return nil, err
		}
	}
	var cands []candidate
	for k, pt := range col.points {
		ok, err := matchFilter(req.GetFilter(), k, pt)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		c := candidate{key: k, pt: pt}
		if q != nil {
			var s float64
			for i := range q {
				s += float64(q[i]) * float64(pt.vector[i])
			}
			c.score = float32(s)
			if req.ScoreThreshold != nil && c.score < req.GetScoreThreshold() {
				continue
			}
		}
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if q != nil && a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.key, b.key)
	})
	limit, offset := uint64(10), req.GetOffset()
	if req.Limit != nil {
		limit = req.GetLimit()
	}
	if offset >= uint64(len(cands)) {
		cands = nil
	} else {
		cands = cands[offset:]
	}
	if uint64(len(cands)) > limit {
		cands = cands[:limit]
	}
	out := make([]*qdrant.ScoredPoint, len(cands))
	for i, c := range cands {
		out[i] = &qdrant.ScoredPoint{
			Id:      proto.Clone(c.pt.id).(*qdrant.PointId),
			Score:   c.score,
			Payload: selectPayload(req.GetWithPayload(), c.pt.payload),
			Version: 1,
		}
	}
	return &qdrant.QueryResponse{Result: out}, nil
}

func selectPayload(sel *qdrant.WithPayloadSelector, pl map[string]*qdrant.Value) map[string]*qdrant.Value {
	keep := func(string) bool { return false }
	switch s := sel.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		keep = func(string) bool { return s.Enable }
	case *qdrant.WithPayloadSelector_Include:
		keep = func(k string) bool { return slices.Contains(s.Include.GetFields(), k) }
	case *qdrant.WithPayloadSelector_Exclude:
		keep = func(k string) bool { return !slices.Contains(s.Exclude.GetFields(), k) }
	}
	out := map[string]*qdrant.Value{}
	for k, v := range pl {
		if keep(k) {
			out[k] = proto.Clone(v).(*qdrant.Value)
		}
	}
	return out
}

// Scroll lists the points that match the filter in ID order, from offset
// (inclusive), with the next page's first ID, as Qdrant does.
func (p *pointsService) Scroll(_ context.Context, req *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	if req.OrderBy != nil || req.ShardKeySelector != nil {
		return nil, unimplemented("order_by and shard keys")
	}
	if req.GetWithVectors().GetEnable() || req.GetWithVectors().GetInclude() != nil {
		return nil, unimplemented("with_vectors")
	}
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	col, err := p.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	from := ""
	if req.Offset != nil {
		if from, err = pointKey(req.GetOffset()); err != nil {
			return nil, err
		}
	}
	var keys []string
	for k, pt := range col.points {
		if k < from {
			continue
		}
		ok, err := matchFilter(req.GetFilter(), k, pt)
		if err != nil {
			return nil, err
		}
		if ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	limit := 10
	if req.Limit != nil {
		limit = int(req.GetLimit())
	}
	resp := &qdrant.ScrollResponse{}
	if len(keys) > limit {
		resp.NextPageOffset = proto.Clone(col.points[keys[limit]].id).(*qdrant.PointId)
		keys = keys[:limit]
	}
	for _, k := range keys {
		pt := col.points[k]
		resp.Result = append(resp.Result, &qdrant.RetrievedPoint{
			Id:      proto.Clone(pt.id).(*qdrant.PointId),
			Payload: selectPayload(req.GetWithPayload(), pt.payload),
		})
	}
	return resp, nil
}

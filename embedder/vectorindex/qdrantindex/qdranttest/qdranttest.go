// Package qdranttest is an in-process stand-in for a Qdrant server: it
// implements the subset of Qdrant's own gRPC services (Qdrant, Collections,
// Points, from the go-client's generated qdrant package) that qdrantindex
// calls, with Qdrant's semantics for that subset, over a real gRPC listener.
//
// It is NOT Qdrant. It keeps everything in memory, searches exactly (no
// HNSW), supports single unnamed dense vectors with Cosine or Dot distance,
// and evaluates filters on must/should/must_not with keyword, bool, integer
// and range matches, HasId, IsEmpty, IsNull and nested filters. Every other
// RPC and option answers codes.Unimplemented. Tests use it so that the
// Qdrant driver's conformance suite always runs; a run against a real Qdrant
// (LOREKEEPER_TEST_QDRANT) is what proves compatibility.
package qdranttest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Version is the Qdrant version the stand-in reports in HealthCheck, so the
// client's compatibility check passes.
const Version = "1.17.0"

// Server is the stand-in. The zero value is not usable; call New.
type Server struct {
	mu          sync.RWMutex
	collections map[string]*collection

	unavailable atomic.Bool
	delay       atomic.Int64 // nanoseconds
	grpc        *grpc.Server
	lis         net.Listener
}

type collection struct {
	size     int
	distance qdrant.Distance
	schema   map[string]qdrant.PayloadSchemaType
	points   map[string]*point // by pointKey
}

type point struct {
	id      *qdrant.PointId
	vector  []float32
	payload map[string]*qdrant.Value
}

// New returns an empty stand-in.
func New() *Server {
	return &Server{collections: make(map[string]*collection)}
}

// Register registers the Qdrant, Collections and Points services on r.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	qdrant.RegisterQdrantServer(r, &qdrantService{s: s})
	qdrant.RegisterCollectionsServer(r, &collectionsService{s: s})
	qdrant.RegisterPointsServer(r, &pointsService{s: s})
}

// Start serves on a new TCP listener at addr ("127.0.0.1:0" for any port).
func (s *Server) Start(addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("qdranttest: listen: %w", err)
	}
	s.lis = lis
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(s.faults))
	s.Register(s.grpc)
	go s.grpc.Serve(lis)
	return nil
}

// Addr is the listener's address, host:port.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Stop stops serving.
func (s *Server) Stop() {
	if s.grpc != nil {
		s.grpc.Stop()
	}
}

// SetUnavailable makes every call fail with codes.Unavailable while on, as a
// Qdrant that is restarting does.
func (s *Server) SetUnavailable(on bool) { s.unavailable.Store(on) }

// SetDelay makes every call wait d before it is served (or until its
// deadline), as an overloaded Qdrant does.
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

func (s *Server) faults(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if d := time.Duration(s.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if s.unavailable.Load() {
		return nil, status.Error(codes.Unavailable, "qdranttest: unavailable (fault injected)")
	}
	return handler(ctx, req)
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

func unimplemented(what string) error {
	return status.Errorf(codes.Unimplemented, "qdranttest: %s is not implemented by the stand-in", what)
}

// collection returns the named collection; the caller holds s.mu.
func (s *Server) collection(name string) (*collection, error) {
	c, ok := s.collections[name]
	if !ok {
		return nil, notFound(name)
	}
	return c, nil
}

// --- Qdrant service

type qdrantService struct {
	qdrant.UnimplementedQdrantServer
	s *Server
}

func (q *qdrantService) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdranttest stand-in (not Qdrant)", Version: Version}, nil
}

// --- Collections service

type collectionsService struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

func (c *collectionsService) CollectionExists(_ context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	_, ok := c.s.collections[req.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

func (c *collectionsService) Create(_ context.Context, req *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	name := req.GetCollectionName()
	if name == "" || strings.ContainsAny(name, "/\\\x00") {
		return nil, status.Errorf(codes.InvalidArgument, "Validation error: invalid collection name %q", name)
	}
	if req.GetVectorsConfig().GetParamsMap() != nil || req.GetSparseVectorsConfig() != nil {
		return nil, unimplemented("named or sparse vectors")
	}
	p := req.GetVectorsConfig().GetParams()
	if p == nil || p.GetSize() == 0 {
		return nil, status.Error(codes.InvalidArgument, "Validation error: vectors config: size must be at least 1")
	}
	switch p.GetDistance() {
	case qdrant.Distance_Cosine, qdrant.Distance_Dot:
	case qdrant.Distance_UnknownDistance:
		return nil, status.Error(codes.InvalidArgument, "Wrong input: unknown distance")
	default:
		return nil, unimplemented("distance " + p.GetDistance().String())
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if _, ok := c.s.collections[name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", name)
	}
	c.s.collections[name] = &collection{
		size: int(p.GetSize()), distance: p.GetDistance(),
		schema: map[string]qdrant.PayloadSchemaType{}, points: map[string]*point{},
	}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (c *collectionsService) Get(_ context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	col, err := c.s.collection(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	schema := make(map[string]*qdrant.PayloadSchemaInfo, len(col.schema))
	for k, t := range col.schema {
		var n uint64
		for _, p := range col.points {
			if _, ok := p.payload[k]; ok {
				n++
			}
		}
		schema[k] = &qdrant.PayloadSchemaInfo{DataType: t, Points: qdrant.PtrOf(n)}
	}
	n := uint64(len(col.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:        qdrant.CollectionStatus_Green,
		SegmentsCount: 1,
		Config: &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{
			ShardNumber: 1,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{
				Size: uint64(col.size), Distance: col.distance,
			}),
		}},
		PayloadSchema: schema,
		PointsCount:   qdrant.PtrOf(n),
	}}, nil
}

func (c *collectionsService) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	var out []*qdrant.CollectionDescription
	for name := range c.s.collections {
		out = append(out, &qdrant.CollectionDescription{Name: name})
	}
	slices.SortFunc(out, func(a, b *qdrant.CollectionDescription) int { return strings.Compare(a.Name, b.Name) })
	return &qdrant.ListCollectionsResponse{Collections: out}, nil
}

func (c *collectionsService) Delete(_ context.Context, req *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	_, ok := c.s.collections[req.GetCollectionName()]
	delete(c.s.collections, req.GetCollectionName())
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"runtime/debug"
	"sort"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// ServerOptions configure the gRPC server. A nil *ServerOptions, and every
// zero field, means the default.
type ServerOptions struct {
	Logger  *slog.Logger
	Metrics *Metrics
	// MaxRecvMsgSize bounds a request. Default DefaultMaxRecvMsgSize.
	MaxRecvMsgSize int
	// Health, when set, is the health server to register (the command keeps
	// it to report NOT_SERVING at shutdown); default a new one, SERVING.
	Health *health.Server
	// Token, when set, is required of every call but health checks, as
	// "authorization: Bearer <token>" metadata (TokenCredentials). Calls
	// in process (NewInProcessConn) need none.
	Token string
	// Extra server options, appended last.
	GRPCOptions []grpc.ServerOption
}

// DefaultMaxRecvMsgSize bounds a request to the gRPC listener: what an MCP
// front end may forward (its stdio lines are bounded at 16 MiB), so that
// the service's own checks answer an argument too long ("name: 2000000
// characters, at most 200 allowed"), as they do in process, rather than
// gRPC refusing the message (a front end sharing a standalone server's
// service said "temporarily unavailable" at 1 MiB).
const DefaultMaxRecvMsgSize = 16 << 20

// NewServer builds the gRPC server for svc: size limits, the logging and
// metrics interceptors, the query service, health and reflection. The
// caller owns it: Serve, then GracefulStop.
func NewServer(svc *Service, opts *ServerOptions) *grpc.Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRecvMsgSize <= 0 {
		o.MaxRecvMsgSize = DefaultMaxRecvMsgSize
	}
	var sopts []grpc.ServerOption
	if o.Token != "" {
		// First: a call without the token is refused before anything
		// else looks at it.
		sopts = requireToken(o.Token)
	}
	sopts = append(sopts, grpc.MaxRecvMsgSize(o.MaxRecvMsgSize), grpc.ChainUnaryInterceptor(interceptors(&o)...))
	sopts = append(sopts, o.GRPCOptions...)
	srv := grpc.NewServer(sopts...)
	lkv1.RegisterQueryServiceServer(srv, &server{svc: svc})
	hs := o.Health
	if hs == nil {
		hs = health.NewServer()
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(lkv1.QueryService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	return srv
}

// interceptors are every call's, outermost first: the server's and the
// in-process client's.
func interceptors(o *ServerOptions) []grpc.UnaryServerInterceptor {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return []grpc.UnaryServerInterceptor{logging(log), metrics(o.Metrics), recovery(log, o.Metrics)}
}

// recovery turns a panic in a handler into an Internal error for that
// call, logged with its stack and counted (lorekeeper_query_panics_total):
// a bug costs one request, not the node and every client it serves. It is
// innermost, so the logging and metrics around it see the Internal code.
func recovery(log *slog.Logger, m *Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				method := path.Base(info.FullMethod)
				log.Error("query handler panicked; answered Internal", "method", method,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if m != nil {
					m.panics.WithLabelValues(method).Inc()
				}
				resp, err = nil, status.Error(codes.Internal, "internal error: the query node failed to answer this request and logged why; other requests are unaffected")
			}
		}()
		return handler(ctx, req)
	}
}

func logging(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		level := slog.LevelDebug
		if err != nil && code != codes.InvalidArgument && code != codes.NotFound {
			level = slog.LevelWarn
		}
		log.Log(ctx, level, "query", "method", path.Base(info.FullMethod), "code", code.String(),
			"duration", time.Since(start), "err", err)
		return resp, err
	}
}

func metrics(m *Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if m == nil {
			return handler(ctx, req)
		}
		start := time.Now()
		resp, err := handler(ctx, req)
		method := path.Base(info.FullMethod)
		m.duration.WithLabelValues(method).Observe(time.Since(start).Seconds())
		if err == nil {
			switch r := resp.(type) {
			case *lkv1.LookupResponse:
				m.results.WithLabelValues(method).Observe(float64(len(r.GetResults())))
			case *lkv1.SearchResponse:
				n := 0
				for _, g := range r.GetGroups() {
					n += len(g.GetResults())
				}
				m.results.WithLabelValues(method).Observe(float64(n))
			}
		}
		return resp, err
	}
}

// toStatus is the one place domain errors become gRPC status errors.
// Context errors keep their meaning (Canceled, DeadlineExceeded); anything
// unknown is Unknown.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	case errors.Is(err, ErrInvalidArgument):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, badgerstore.ErrLoading):
		// A restart's index is still loading: the client retries, and can
		// tell its user why (the reason in an ErrorInfo).
		st, derr := status.New(codes.Unavailable, err.Error()).WithDetails(&errdetails.ErrorInfo{Reason: lkv1.ReasonIndexLoading, Domain: lkv1.ErrorDomain})
		if derr != nil {
			return status.Error(codes.Unavailable, err.Error())
		}
		return st.Err()
	}
	return status.Error(codes.Unknown, err.Error())
}

// server adapts Service to the generated interface; a new RPC in the
// contract is a compile error here.
type server struct {
	lkv1.UnsafeQueryServiceServer
	svc *Service
}

var _ lkv1.QueryServiceServer = (*server)(nil)

func (s *server) LookupSpells(ctx context.Context, r *lkv1.LookupSpellsRequest) (*lkv1.LookupResponse, error) {
	resp, err := s.svc.LookupSpells(ctx, r)
	return resp, toStatus(err)
}

func (s *server) LookupCreatures(ctx context.Context, r *lkv1.LookupCreaturesRequest) (*lkv1.LookupResponse, error) {
	resp, err := s.svc.LookupCreatures(ctx, r)
	return resp, toStatus(err)
}

func (s *server) LookupEquipment(ctx context.Context, r *lkv1.LookupEquipmentRequest) (*lkv1.LookupResponse, error) {
	resp, err := s.svc.LookupEquipment(ctx, r)
	return resp, toStatus(err)
}

func (s *server) LookupCharacterOptions(ctx context.Context, r *lkv1.LookupCharacterOptionsRequest) (*lkv1.LookupResponse, error) {
	resp, err := s.svc.LookupCharacterOptions(ctx, r)
	return resp, toStatus(err)
}

func (s *server) LookupRules(ctx context.Context, r *lkv1.LookupRulesRequest) (*lkv1.LookupResponse, error) {
	resp, err := s.svc.LookupRules(ctx, r)
	return resp, toStatus(err)
}

func (s *server) Search(ctx context.Context, r *lkv1.SearchRequest) (*lkv1.SearchResponse, error) {
	resp, err := s.svc.Search(ctx, r)
	return resp, toStatus(err)
}

func (s *server) GetEntity(ctx context.Context, r *lkv1.GetEntityRequest) (*lkv1.GetEntityResponse, error) {
	resp, err := s.svc.GetEntity(ctx, r)
	return resp, toStatus(err)
}

func (s *server) ListDocuments(ctx context.Context, r *lkv1.ListDocumentsRequest) (*lkv1.ListDocumentsResponse, error) {
	resp, err := s.svc.ListDocuments(ctx, r)
	return resp, toStatus(err)
}

func (s *server) Status(ctx context.Context, r *lkv1.StatusRequest) (*lkv1.StatusResponse, error) {
	resp, err := s.svc.Status(ctx, r)
	return resp, toStatus(err)
}

func (s *server) CompleteValues(ctx context.Context, r *lkv1.CompleteValuesRequest) (*lkv1.CompleteValuesResponse, error) {
	resp, err := s.svc.CompleteValues(ctx, r)
	return resp, toStatus(err)
}

func sortDocuments(d []*lkv1.DocumentSummary) {
	sort.SliceStable(d, func(i, j int) bool {
		if d[i].GetEntityCount() != d[j].GetEntityCount() {
			return d[i].GetEntityCount() > d[j].GetEntityCount()
		}
		if d[i].GetDocument().GetKey() != d[j].GetDocument().GetKey() {
			return d[i].GetDocument().GetKey() < d[j].GetDocument().GetKey()
		}
		return d[i].GetDocument().GetSource() < d[j].GetDocument().GetSource()
	})
}

// Shutdown stops srv gracefully: in-flight RPCs finish, new ones are
// refused; when ctx ends first, the remaining RPCs are cut off. Set the
// health server (ServerOptions.Health) NOT_SERVING with its Shutdown
// before calling this, so that balancers stop sending work first.
func Shutdown(ctx context.Context, srv *grpc.Server) error {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		srv.Stop()
		<-done
		return ctx.Err()
	}
}

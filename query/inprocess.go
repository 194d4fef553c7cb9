package query

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// NewInProcessConn is a connection to svc in this process, for
// lkv1.NewQueryServiceClient: each call runs the handler and interceptors
// (logging, metrics) a server built by NewServer with opts runs, without a
// network between. A loopback gRPC call cost 200-400 µs more than this in
// BenchmarkMCPHTTP, with the process otherwise idle (goroutine hand-offs
// on both sides, each of which may have to wake a thread): more than a
// name lookup itself. The MCP server of a one-process deployment calls
// through this instead.
//
// Requests and responses are copied, as a network would: neither side sees
// the other change a message it keeps. Errors are gRPC status errors, as a
// remote call's are. Nothing of the network comes along: no metadata, no
// peer, no size limits (opts.GRPCOptions and MaxRecvMsgSize are ignored).
// The query service has no streaming calls: NewStream answers
// Unimplemented.
func NewInProcessConn(svc *Service, opts *ServerOptions) grpc.ClientConnInterface {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	c := &inProcessConn{
		srv:         &server{svc: svc},
		methods:     make(map[string]grpc.MethodDesc),
		interceptor: chainUnary(interceptors(&o)...),
	}
	desc := lkv1.QueryService_ServiceDesc
	for _, m := range desc.Methods {
		c.methods["/"+desc.ServiceName+"/"+m.MethodName] = m
	}
	return c
}

type inProcessConn struct {
	srv         lkv1.QueryServiceServer
	methods     map[string]grpc.MethodDesc
	interceptor grpc.UnaryServerInterceptor
}

func (c *inProcessConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	m, ok := c.methods[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	dec := func(in any) error {
		proto.Merge(in.(proto.Message), args.(proto.Message))
		return nil
	}
	resp, err := m.Handler(c.srv, ctx, dec, c.interceptor)
	if err != nil {
		return toStatus(err)
	}
	out := reply.(proto.Message)
	proto.Reset(out)
	proto.Merge(out, resp.(proto.Message))
	return nil
}

func (c *inProcessConn) NewStream(_ context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Errorf(codes.Unimplemented, "in-process streaming call %s", method)
}

// chainUnary runs ics in order, the first outermost, as
// grpc.ChainUnaryInterceptor does.
func chainUnary(ics ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		next := handler
		for i := len(ics) - 1; i >= 0; i-- {
			ic, h := ics[i], next
			next = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, h) }
		}
		return next(ctx, req)
	}
}

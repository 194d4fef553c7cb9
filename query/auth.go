package query

import (
	"context"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TokenHeader is the metadata key a client sends the service's token
// under, as "Bearer <token>".
const TokenHeader = "authorization"

// errNoToken is every call's answer without the right token: the same
// words for a missing and a wrong one.
var errNoToken = status.Error(codes.Unauthenticated,
	"this query service requires its token (lorekeeper up and node keep it in <data-dir>/credentials/grpc.token): give --grpc-token-file, or --data-dir of the LoreKeeper that serves it")

// authorized reports whether ctx carries token. Health checks need none:
// balancers and probes ask them, and they tell nothing.
func authorized(ctx context.Context, method, token string) bool {
	if strings.HasPrefix(method, "/"+healthpb.Health_ServiceDesc.ServiceName+"/") {
		return true
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(TokenHeader) {
		scheme, got, _ := strings.Cut(v, " ")
		if strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1 {
			return true
		}
	}
	return false
}

// requireToken refuses every call (reflection included) that does not
// carry token.
func requireToken(token string) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if !authorized(ctx, info.FullMethod, token) {
				return nil, errNoToken
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if !authorized(ss.Context(), info.FullMethod, token) {
				return errNoToken
			}
			return handler(srv, ss)
		}),
	}
}

// TokenCredentials sends token with every call of a client connection
// (grpc.WithPerRPCCredentials). Over plaintext too: the service listens on
// loopback unless given TLS.
type TokenCredentials string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t TokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{TokenHeader: "Bearer " + string(t)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (TokenCredentials) RequireTransportSecurity() bool { return false }

package main

import (
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/health" // client-side health checking, named by queryServiceConfig
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// queryServiceConfig spreads calls over every query node the target names
// (round robin), leaves out a node whose health service says NOT_SERVING
// (a node shutting down says so first) or whose connection is down, and
// retries a call refused as UNAVAILABLE on another node: every query is a
// read, so a retry is safe. One node going away then costs no call beyond
// those it was answering when it went.
var queryServiceConfig = fmt.Sprintf(`{
  "loadBalancingConfig": [{"round_robin": {}}],
  "healthCheckConfig": {"serviceName": %q},
  "methodConfig": [{
    "name": [{"service": %q}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`, lkv1.QueryService_ServiceDesc.ServiceName, lkv1.QueryService_ServiceDesc.ServiceName)

// queryTarget turns --grpc-addr into a gRPC target and its dial options.
// It accepts one address ("host:port"), several separated by commas
// (each a query node), or any gRPC target such as "dns:///query:7411",
// whose every DNS record is a query node.
func queryTarget(addr string) (string, []grpc.DialOption, error) {
	opts := []grpc.DialOption{grpc.WithDefaultServiceConfig(queryServiceConfig)}
	addrs := splitList(addr)
	switch {
	case len(addrs) == 0:
		return "", nil, fmt.Errorf("--grpc-addr: no address")
	case len(addrs) == 1:
		return addrs[0], opts, nil
	}
	state := resolver.State{}
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return "", nil, fmt.Errorf("--grpc-addr %q: %w", a, err)
		}
		// Each node's certificate is checked against its own host name.
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a, ServerName: host})
	}
	r := manual.NewBuilderWithScheme("lorekeeper-query")
	r.InitialState(state)
	return r.Scheme() + ":///" + strings.Join(addrs, ","), append(opts, grpc.WithResolvers(r)), nil
}

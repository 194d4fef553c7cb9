package query_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/emptypb"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// panicService is a service whose one method panics as a bug would: it is
// registered on the real server, so its calls pass the real interceptors.
var panicService = grpc.ServiceDesc{
	ServiceName: "lorekeeper.test.Panic",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Boom",
		Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(emptypb.Empty)
			if err := dec(in); err != nil {
				return nil, err
			}
			boom := func(context.Context, any) (any, error) {
				var xs []int
				return xs[3], nil // index out of range, as the cursor bug was
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/lorekeeper.test.Panic/Boom"}, boom)
		},
	}},
}

// TestServer_RecoversPanics: a handler that panics answers its call
// Internal, logs the panic with its stack, counts it, and the server goes
// on serving the query service on the same connection.
func TestServer_RecoversPanics(t *testing.T) {
	logs := &lockedBuffer{}
	reg := prometheus.NewRegistry()
	svc := query.NewService(snapshotStore(t), nil, nil)
	srv := query.NewServer(svc, &query.ServerOptions{Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: query.NewMetrics(reg)})
	srv.RegisterService(&panicService, struct{}{})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx := context.Background()
	for i := range 3 {
		err := conn.Invoke(ctx, "/lorekeeper.test.Panic/Boom", &emptypb.Empty{}, &emptypb.Empty{})
		if status.Code(err) != codes.Internal {
			t.Fatalf("call %d: %v, want Internal", i, err)
		}
		if strings.Contains(err.Error(), "index out of range") {
			t.Errorf("the client sees the panic: %v", err)
		}
	}
	for _, want := range []string{"query handler panicked", "method=Boom", "index out of range", "recover_test.go"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	want := "# HELP lorekeeper_query_panics_total Query requests whose handler panicked (answered Internal; the process goes on), by method.\n# TYPE lorekeeper_query_panics_total counter\n"
	for _, m := range append([]string{"Boom"}, methodNames()...) {
		n := "0"
		if m == "Boom" {
			n = "3"
		}
		want += `lorekeeper_query_panics_total{method="` + m + `"} ` + n + "\n"
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lorekeeper_query_panics_total"); err != nil {
		t.Error(err)
	}
	resp, err := lkv1.NewQueryServiceClient(conn).LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "fireball"}})
	if err != nil || len(resp.GetResults()) == 0 {
		t.Fatalf("a lookup after the panics: %v, %d results", err, len(resp.GetResults()))
	}
}

func methodNames() []string {
	var out []string
	for _, m := range lkv1.QueryService_ServiceDesc.Methods {
		out = append(out, m.MethodName)
	}
	return out
}

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// checkCredentials covers issue 49, row 1 on a running up: a local
// process without the data directory's tokens is refused by the embedded
// NATS and by the query service (reflection included; health checks
// answer); with them it gets in; and a resync repairs an entity changed
// behind its back, as lorekeeper sync run by a person does.
func checkCredentials(t *testing.T, st *upStack, dir string) {
	for path, want := range map[string]os.FileMode{
		filepath.Join(dir, credentialsDir): 0o700,
		tokenPath(dir, natsToken):          0o600,
		tokenPath(dir, grpcToken):          0o600,
	} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %o", path, err, want)
		}
	}

	if nc, err := nats.Connect(st.natsURL); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("NATS without the token: %v, want an authorization violation", err)
		if nc != nil {
			nc.Close()
		}
	}
	nc, err := nats.Connect(st.natsURL, nats.Token(testToken(t, dir, natsToken)))
	if err != nil {
		t.Fatalf("NATS with the token: %v", err)
	}
	defer nc.Close()

	conn, err := grpc.NewClient(st.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := lkv1.NewQueryServiceClient(conn).Status(t.Context(), &lkv1.StatusRequest{}); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "grpc.token") {
		t.Errorf("gRPC without the token: %v, want Unauthenticated saying where the token is", err)
	}
	refl, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err == nil {
		_ = refl.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
		_, err = refl.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("reflection without the token: %v, want Unauthenticated", err)
	}
	if h, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without the token: %v %v, want SERVING", h, err)
	}

	// Fireball changed behind the resync's back (what anyone could do
	// through the open port): lorekeeper sync puts the source's back.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	client := func() lkv1.QueryServiceClient {
		c, cl, err := dialQuery(st.grpcAddr, nil, testToken(t, dir, grpcToken))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return cl
	}()
	const key = "open5e_v2:srd-2014:spell:fireball"
	got, err := client.GetEntity(t.Context(), &lkv1.GetEntityRequest{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	real := got.GetEntity()
	changed := proto.CloneOf(real)
	changed.Description = "A bright streak heals every creature in range."
	changed.ContentHash, _ = ingest.ContentHash(changed)
	m, err := ingest.UpsertMsg(changed, "injected", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	served := func(want string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			got, err := client.GetEntity(t.Context(), &lkv1.GetEntityRequest{Key: key})
			if err == nil && got.GetEntity().GetDescription() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Fireball not served as %.40q after a minute: %.40q, %v", want, got.GetEntity().GetDescription(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	served(changed.GetDescription())
	var out, errOut strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := runSync(ctx, []string{"--data-dir", dir, "--open5e-endpoints", "v2/spells", "--log-level", "warn"}, &out, &errOut); err != nil {
		t.Fatalf("sync: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "/v2/spells/: fetched") || !strings.Contains(out.String(), "repaired 1") {
		t.Errorf("sync after the change: %s, want /v2/spells/ repaired 1", out.String())
	}
	served(real.GetDescription())
}

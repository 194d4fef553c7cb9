package query_test

import (
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// TestInProcessConn checks that a call through the in-process connection
// answers as the same call over gRPC does: the same response or the same
// status code, with the server's interceptors run.
func TestInProcessConn(t *testing.T) {
	svc := query.NewService(snapshotStore(t), snap.emb, nil)
	remote := lkv1.NewQueryServiceClient(dial(t, svc, nil))
	reg := prometheus.NewPedanticRegistry()
	conn := query.NewInProcessConn(svc, &query.ServerOptions{Metrics: query.NewMetrics(reg)})
	local := lkv1.NewQueryServiceClient(conn)
	ctx := context.Background()
	const fireball = "open5e_v2:srd-2014:spell:fireball"

	tests := []struct {
		name string
		call func(lkv1.QueryServiceClient) (proto.Message, error)
		want codes.Code
	}{
		{"name lookup", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("fireball", 0)})
		}, codes.OK},
		{"filtered lookup, a page", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: common("", 5), Types: []string{"undead"}})
		}, codes.OK},
		{"search", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.Search(ctx, &lkv1.SearchRequest{Query: "dragon breath", Limit: 5})
		}, codes.OK},
		{"get", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: fireball})
		}, codes.OK},
		{"documents", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
		}, codes.OK},
		{"completion", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.CompleteValues(ctx, &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, Prefix: "fire"})
		}, codes.OK},
		{"not found", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: fireball + "-nope"})
		}, codes.NotFound},
		{"invalid argument", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			return c.CompleteValues(ctx, &lkv1.CompleteValuesRequest{Prefix: "x"})
		}, codes.InvalidArgument},
		{"deadline passed", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			dctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
			defer cancel()
			<-dctx.Done()
			return c.LookupSpells(dctx, &lkv1.LookupSpellsRequest{Common: common("fireball", 0)})
		}, codes.DeadlineExceeded},
		{"canceled", func(c lkv1.QueryServiceClient) (proto.Message, error) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			return c.Search(cctx, &lkv1.SearchRequest{Query: "dragon breath"})
		}, codes.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, werr := tt.call(remote)
			got, gerr := tt.call(local)
			if status.Code(werr) != tt.want {
				t.Fatalf("over gRPC: %v, want %v", werr, tt.want)
			}
			if status.Code(gerr) != tt.want {
				t.Fatalf("in process: %v, want %v", gerr, tt.want)
			}
			if tt.want != codes.OK {
				if _, ok := status.FromError(gerr); !ok {
					t.Errorf("in process: %T %v is not a status error", gerr, gerr)
				}
				return
			}
			// A ranked search's cursor names a snapshot of its own, and
			// its similarities can differ in the last bit from one call
			// to the next (sums in another order).
			if w, ok := want.(*lkv1.SearchResponse); ok {
				g := got.(*lkv1.SearchResponse)
				if w.GetNextCursor() == "" || g.GetNextCursor() == "" {
					t.Errorf("search cursors %q, %q: want both", w.GetNextCursor(), g.GetNextCursor())
				}
				w.NextCursor, g.NextCursor = "", ""
				for _, r := range [2]*lkv1.SearchResponse{w, g} {
					for _, grp := range r.GetGroups() {
						for _, res := range grp.GetResults() {
							res.SimilarityScore = proto.Float64(math.Round(res.GetSimilarityScore()*1e9) / 1e9)
						}
					}
				}
			}
			if !proto.Equal(want, got) {
				t.Errorf("in process differs from gRPC:\n%.2000v\nover gRPC:\n%.2000v", got, want)
			}
		})
	}

	t.Run("responses are copies", func(t *testing.T) {
		// The service remembers a search's ranking and answers the same
		// search again from it: a caller changing its response must not
		// change what the service keeps.
		req := &lkv1.SearchRequest{Query: "dragon breath", Limit: 2}
		first, err := local.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		name := first.GetGroups()[0].GetResults()[0].GetEntity().GetName()
		for _, g := range first.GetGroups() {
			for _, r := range g.GetResults() {
				r.Entity.Name, r.Entity.Description = "changed by the caller", ""
			}
		}
		req.Query = "changed by the caller"
		again, err := local.Search(ctx, &lkv1.SearchRequest{Query: "dragon breath", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := again.GetGroups()[0].GetResults()[0].GetEntity(); got.GetName() != name || got.GetDescription() == "" {
			t.Errorf("a caller's change to its response reached the service: %q, want %q", got.GetName(), name)
		}
	})
	t.Run("interceptors", func(t *testing.T) {
		// Each call that reached the service, once: not the two whose
		// context had ended, as over gRPC, where the client fails them.
		want := map[string]uint64{"LookupSpells": 1, "LookupCreatures": 1, "Search": 3, "GetEntity": 2, "ListDocuments": 1, "CompleteValues": 2}
		got := map[string]uint64{}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "lorekeeper_query_request_duration_seconds" {
				continue
			}
			for _, m := range mf.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
			}
		}
		if !maps.Equal(want, got) {
			t.Errorf("request durations observed per method: %v, want %v", got, want)
		}
	})
	t.Run("unknown method", func(t *testing.T) {
		err := conn.Invoke(ctx, "/lorekeeper.v1.QueryService/Nope", &lkv1.StatusRequest{}, &lkv1.StatusResponse{})
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("unknown method: %v, want Unimplemented", err)
		}
		_, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/lorekeeper.v1.QueryService/Nope")
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("stream: %v, want Unimplemented", err)
		}
	})
}

package query_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/qdrant/go-client/qdrant"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex/qdranttest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// qdrantStore is a node whose vector index is Qdrant (the in-process
// stand-in), holding the SRD 5.1 spells with their real vectors.
func qdrantStore(t *testing.T) (*badgerstore.Store, *qdranttest.Server) {
	t.Helper()
	ctx := context.Background()
	snapshotStore(t) // the model, the entities and their cached vectors
	srv := qdranttest.New()
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	client, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	info := snap.store.Model()
	idx, err := qdrantindex.Open(ctx, client, &vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := srdSpellStore(t, idx)
	return st, srv
}

// TestSemantic_QdrantBackend: semantic ranking goes through the vector
// index, so it works over Qdrant, and when Qdrant is down the service
// answers by keywords and says so.
func TestSemantic_QdrantBackend(t *testing.T) {
	st, srv := qdrantStore(t)
	reg := prometheus.NewPedanticRegistry()
	m := query.NewMetrics(reg)
	c := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, snap.emb, &query.Options{Metrics: m}), nil))
	req := &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "restore health and cure wounds", Limit: 5}}

	resp, err := c.LookupSpells(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := names(resp.GetResults())
	if resp.GetRanking() != lkv1.Ranking_RANKING_HYBRID || indexOf(got, "Cure Wounds") < 0 {
		t.Errorf("over Qdrant: ranking %v, results %v; want hybrid with Cure Wounds", resp.GetRanking(), got)
	}

	srv.SetUnavailable(true)
	resp, err = c.LookupSpells(t.Context(), req)
	if err != nil {
		t.Fatalf("with Qdrant down the lookup failed instead of falling back: %v", err)
	}
	if resp.GetRanking() != lkv1.Ranking_RANKING_KEYWORD || !strings.Contains(resp.GetFallbackReason(), "vector index") {
		t.Errorf("Qdrant down: ranking %v, reason %q; want KEYWORD naming the vector index", resp.GetRanking(), resp.GetFallbackReason())
	}
	if len(resp.GetResults()) == 0 {
		t.Error("Qdrant down: no keyword results")
	}
	if got := testutil.ToFloat64(mFallbacks(reg, t, "vector_index")); got != 1 {
		t.Errorf("fallbacks_total{reason=vector_index} = %v, want 1", got)
	}
}

package query_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

func TestGetEntity(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	const key = "open5e_v2:srd-2014:spell:fireball"
	for _, in := range []string{key, lkv1.EntityURI(key)} {
		resp, err := c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: in})
		if err != nil {
			t.Fatalf("GetEntity(%q): %v", in, err)
		}
		if resp.GetEntity().GetKey() != key || resp.GetUri() != lkv1.EntityURI(key) || resp.GetEntity().GetDescription() == "" {
			t.Errorf("GetEntity(%q) = %s %s", in, resp.GetEntity().GetKey(), resp.GetUri())
		}
	}
	_, err := c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: "lorekeeper://entity/open5e_v2:srd-2014:spell:nope"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("missing entity: %v, want NotFound", err)
	}
}

func TestListDocuments(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	resp, err := c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ds := resp.GetDocuments()
	if len(ds) < 9 {
		t.Fatalf("%d documents, want at least the 9 with entities", len(ds))
	}
	var total uint64
	for i, d := range ds {
		if i > 0 && d.GetEntityCount() > ds[i-1].GetEntityCount() {
			t.Errorf("%s (%d) after %s (%d): want largest first", d.GetDocument().GetKey(), d.GetEntityCount(), ds[i-1].GetDocument().GetKey(), ds[i-1].GetEntityCount())
		}
		var sum uint64
		for _, n := range d.GetCounts() {
			sum += n
		}
		if sum != d.GetEntityCount() || d.GetDocument().GetName() == "" {
			t.Errorf("%s: counts per kind sum to %d, entity count %d", d.GetDocument().GetKey(), sum, d.GetEntityCount())
		}
		total += d.GetEntityCount()
	}
	if want := uint64(len(snap.entities)); total != want {
		t.Errorf("documents hold %d entities, want %d", total, want)
	}
	v1, err := c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{Sources: []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v1.GetDocuments()) == 0 {
		t.Fatal("no open5e_v1 documents")
	}
	for _, d := range v1.GetDocuments() {
		if d.GetDocument().GetSource() != lkv1.Source_SOURCE_OPEN5E_V1 {
			t.Errorf("source filter let %s (%v) through", d.GetDocument().GetKey(), d.GetDocument().GetSource())
		}
	}
	ob, err := c.ListDocuments(ctx, &lkv1.ListDocumentsRequest{Sources: []lkv1.Source{lkv1.Source_SOURCE_ORCBREW}})
	if err != nil || len(ob.GetDocuments()) != 0 {
		t.Errorf("orcbrew documents = %v, %v; want none, no error", ob.GetDocuments(), err)
	}
}

func TestStatus(t *testing.T) {
	c := client(t)
	resp, err := c.Status(context.Background(), &lkv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetEntities() != uint64(len(snap.entities)) || resp.GetCounts()["spell"] == 0 || resp.GetLastWrite() == nil {
		t.Errorf("Status = %v", resp)
	}
	if snap.emb != nil && (!resp.GetSemanticAvailable() || resp.GetVectors() != resp.GetEntities() || resp.GetEmbeddingModel() == "") {
		t.Errorf("Status with a model: semantic %v, %d vectors, model %q", resp.GetSemanticAvailable(), resp.GetVectors(), resp.GetEmbeddingModel())
	}
}

func TestSemantic(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	t.Run("scores in [0, 1], highest first, filters first", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "fire damage", Limit: 10}, Levels: []int32{3}, Schools: []string{"evocation"}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetRanking() != lkv1.Ranking_RANKING_HYBRID || len(resp.GetResults()) == 0 {
			t.Fatalf("ranking %v, %d results", resp.GetRanking(), len(resp.GetResults()))
		}
		prev := 2.0
		for _, r := range resp.GetResults() {
			s := r.GetSimilarityScore()
			if r.SimilarityScore == nil || s < 0 || s > 1 || s > prev {
				t.Errorf("%s: score %v after %v", r.GetEntity().GetName(), r.SimilarityScore, prev)
			}
			prev = s
			if sp := r.GetEntity().GetSpell(); sp.GetLevel() != 3 || sp.GetSchool() != "evocation" {
				t.Errorf("%s escaped the filters", r.GetEntity().GetName())
			}
		}
	})
	t.Run("meaning", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "protect from fire damage", Limit: 50, Documents: docs("srd-2014")}})
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.GetResults())
		fs, is := indexOf(got, "Fire Shield"), indexOf(got, "Ice Storm")
		if fs < 0 || is >= 0 && is < fs {
			t.Errorf("Fire Shield at %d, Ice Storm at %d; want Fire Shield higher: %v", fs, is, got)
		}
	})
	t.Run("empty semantic query is structured", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "   ", Limit: 5}, Levels: []int32{1}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetRanking() != lkv1.Ranking_RANKING_STRUCTURED || len(resp.GetResults()) != 5 || resp.GetResults()[0].SimilarityScore != nil {
			t.Errorf("ranking %v, %d results; want STRUCTURED, 5, no scores", resp.GetRanking(), len(resp.GetResults()))
		}
	})
	t.Run("long query truncated with a warning", func(t *testing.T) {
		q := "a spell that heals wounds " + strings.Repeat("and more words ", 60)
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: q, Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetWarnings()) != 1 || !strings.Contains(resp.GetWarnings()[0], "512") || len(resp.GetResults()) != 5 {
			t.Errorf("warnings %v, %d results; want a truncation warning and results", resp.GetWarnings(), len(resp.GetResults()))
		}
	})
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// brokenModel fails or stalls: the faults a real model shows (a missing
// library, a stuck session), for the fallback path.
type brokenModel struct{ delay time.Duration }

func (b brokenModel) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	if b.delay == 0 {
		return nil, errors.New("onnx session failed")
	}
	select {
	case <-time.After(b.delay):
		return nil, errors.New("too late")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestSemantic_Fallback(t *testing.T) {
	st := snapshotStore(t)
	ctx := context.Background()
	tests := []struct {
		name, reason, metric string
		emb                  query.Embedder
	}{
		{"model error", "onnx session failed", "model_error", brokenModel{}},
		{"timeout", "took over", "timeout", brokenModel{delay: time.Minute}},
		{"no model", "no embedding model", "no_model", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m := query.NewMetrics(reg)
			svc := query.NewService(st, tt.emb, &query.Options{SemanticTimeout: 50 * time.Millisecond, Metrics: m})
			c := lkv1.NewQueryServiceClient(dial(t, svc, &query.ServerOptions{Metrics: m}))
			resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "cure wounds", Limit: 5, Documents: docs("srd-2014")}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetRanking() != lkv1.Ranking_RANKING_KEYWORD || !strings.Contains(resp.GetFallbackReason(), tt.reason) {
				t.Errorf("ranking %v, reason %q; want KEYWORD and %q", resp.GetRanking(), resp.GetFallbackReason(), tt.reason)
			}
			if got := names(resp.GetResults()); len(got) == 0 || got[0] != "Cure Wounds" {
				t.Errorf("keyword ranking = %v, want Cure Wounds first", got)
			}
			sr, err := c.Search(ctx, &lkv1.SearchRequest{Query: "firbal"})
			if err != nil || sr.GetFallbackReason() == "" || len(sr.GetGroups()) == 0 {
				t.Errorf("search fallback: %v, reason %q", err, sr.GetFallbackReason())
			}
			if got := testutil.ToFloat64(mFallbacks(reg, t, tt.metric)); got != 2 {
				t.Errorf("fallbacks_total{reason=%q} = %v, want 2", tt.metric, got)
			}
		})
	}
}

// mFallbacks reads one fallback counter from reg.
func mFallbacks(reg *prometheus.Registry, t *testing.T, reason string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lorekeeper_query_fallbacks_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
					c.Add(m.GetCounter().GetValue())
					return c
				}
			}
		}
	}
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
}

func TestServer(t *testing.T) {
	st := snapshotStore(t)
	reg := prometheus.NewPedanticRegistry()
	m := query.NewMetrics(reg)
	conn := dial(t, query.NewService(st, snap.emb, &query.Options{Metrics: m}), &query.ServerOptions{Metrics: m})
	ctx := context.Background()
	t.Run("health", func(t *testing.T) {
		for _, svc := range []string{"", "lorekeeper.v1.QueryService"} {
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("health %q: %v, %v", svc, resp.GetStatus(), err)
			}
		}
	})
	t.Run("reflection", func(t *testing.T) {
		stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range resp.GetListServicesResponse().GetService() {
			found = found || s.GetName() == "lorekeeper.v1.QueryService"
		}
		if !found {
			t.Errorf("reflection lists %v, want lorekeeper.v1.QueryService", resp.GetListServicesResponse().GetService())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		dctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
		defer cancel()
		time.Sleep(time.Millisecond)
		_, err := lkv1.NewQueryServiceClient(conn).LookupSpells(dctx, &lkv1.LookupSpellsRequest{})
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("expired deadline: %v, want DeadlineExceeded", err)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		c := lkv1.NewQueryServiceClient(conn)
		if _, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("", 7)}); err != nil {
			t.Fatal(err)
		}
		mfs, _ := reg.Gather()
		var durations, results int
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != "LookupSpells" {
					continue
				}
				switch mf.GetName() {
				case "lorekeeper_query_request_duration_seconds":
					durations++
					if m.GetHistogram().GetSampleCount() == 0 {
						t.Error("no LookupSpells duration sample")
					}
				case "lorekeeper_query_results":
					results++
					h := m.GetHistogram()
					if h.GetSampleCount() != 1 || h.GetSampleSum() != 7 {
						t.Errorf("results histogram: %d samples, sum %v; want 1, 7", h.GetSampleCount(), h.GetSampleSum())
					}
				}
			}
		}
		if durations != 1 || results != 1 {
			t.Errorf("LookupSpells series: %d durations, %d results; want 1 and 1", durations, results)
		}
		problems, err := testutil.GatherAndLint(reg)
		if err != nil || len(problems) != 0 {
			t.Errorf("lint: %v %v", problems, err)
		}
	})
}

func TestToStatus(t *testing.T) {
	tests := []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{context.Canceled, codes.Canceled},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{&query.ArgumentError{Field: "name", Reason: "too long"}, codes.InvalidArgument},
		{errors.Join(errors.New("wrapped"), query.ErrNotFound), codes.NotFound},
		{errors.New("boom"), codes.Unknown},
	}
	for _, tt := range tests {
		if got := status.Code(query.ToStatus(tt.err)); got != tt.want {
			t.Errorf("toStatus(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	// A restart's index still loading: Unavailable, with the reason a
	// client can tell its user (the MCP server reads it).
	loading := fmt.Errorf("%w (12 of 9790 entities so far); retry in a few seconds", badgerstore.ErrLoading)
	st := status.Convert(query.ToStatus(loading))
	var reasons []string
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == lkv1.ErrorDomain {
			reasons = append(reasons, ei.GetReason())
		}
	}
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "12 of 9790") || !slices.Equal(reasons, []string{lkv1.ReasonIndexLoading}) {
		t.Errorf("toStatus(%v) = %v %q, reasons %v; want Unavailable, the message and %s", loading, st.Code(), st.Message(), reasons, lkv1.ReasonIndexLoading)
	}
}

// countingModel is the real model, counting its calls.
type countingModel struct {
	query.Embedder
	mu sync.Mutex
	n  int
}

func (c *countingModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func TestSemantic_QueryCache(t *testing.T) {
	st := snapshotStore(t)
	m := &countingModel{Embedder: snap.emb}
	c := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, m, nil), nil))
	ctx := context.Background()
	var first []string
	for i := range 3 {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "Summon a Spectral Steed", Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = names(resp.GetResults())
		} else if got := names(resp.GetResults()); !slices.Equal(got, first) {
			t.Errorf("call %d = %v, want %v", i, got, first)
		}
	}
	if m.n != 1 {
		t.Errorf("model called %d times for one query text, want 1", m.n)
	}
}

func TestShutdown(t *testing.T) {
	st := snapshotStore(t)
	srv := query.NewServer(query.NewService(st, nil, nil), nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := lkv1.NewQueryServiceClient(conn)
	if _, err := c.Status(ctx, &lkv1.StatusRequest{}); err != nil {
		t.Fatalf("Status before Shutdown: %v", err)
	}
	if err := query.Shutdown(ctx, srv); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Shutdown: %v, want nil", err)
	}
	if _, err := c.Status(ctx, &lkv1.StatusRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("Status after Shutdown: %v, want Unavailable", err)
	}
}

// Lookups and search leave out each entity's source record (the largest
// field, shown by no result); GetEntity returns it.
func TestResults_sourceRecordOnlyFromGetEntity(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	lr, err := c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "adult red dragon", Documents: docs("srd-2014")}})
	if err != nil || len(lr.GetResults()) != 1 {
		t.Fatalf("lookup: %v, %d results", err, len(lr.GetResults()))
	}
	sr, err := c.Search(ctx, &lkv1.SearchRequest{Query: "adult red dragon", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	results := lr.GetResults()
	for _, g := range sr.GetGroups() {
		results = append(results, g.GetResults()...)
	}
	for _, r := range results {
		if n := len(r.GetEntity().GetSourceRecord()); n > 0 {
			t.Errorf("%s: a result carries its source record (%d bytes)", r.GetEntity().GetKey(), n)
		}
	}
	ge, err := c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: lr.GetResults()[0].GetUri()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ge.GetEntity().GetSourceRecord()), `"srd_adult-red-dragon"`) {
		t.Errorf("GetEntity's source record: %.80q", ge.GetEntity().GetSourceRecord())
	}
}

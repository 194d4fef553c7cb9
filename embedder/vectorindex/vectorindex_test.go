package vectorindex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
)

func TestNewError_Classifies(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error // nil: unclassified
	}{
		{"grpc unavailable", status.Error(codes.Unavailable, "down"), vectorindex.ErrUnavailable},
		{"grpc deadline", status.Error(codes.DeadlineExceeded, "slow"), vectorindex.ErrUnavailable},
		{"grpc resource exhausted", status.Error(codes.ResourceExhausted, "rate"), vectorindex.ErrUnavailable},
		{"wrapped grpc unavailable", fmt.Errorf("Query() failed: c: %w", status.Error(codes.Unavailable, "down")), vectorindex.ErrUnavailable},
		{"grpc not found", status.Error(codes.NotFound, "no collection"), vectorindex.ErrNotFound},
		{"grpc invalid argument", status.Error(codes.InvalidArgument, "bad"), vectorindex.ErrInvalidArgument},
		{"context deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), vectorindex.ErrUnavailable},
		{"sentinel passes through", fmt.Errorf("x: %w", vectorindex.ErrDimensionMismatch), vectorindex.ErrDimensionMismatch},
		{"grpc internal", status.Error(codes.Internal, "boom"), nil},
		{"plain", errors.New("boom"), nil},
	}
	sentinels := []error{vectorindex.ErrNotFound, vectorindex.ErrUnavailable, vectorindex.ErrDimensionMismatch,
		vectorindex.ErrInvalidFilter, vectorindex.ErrInvalidArgument, vectorindex.ErrClosed}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := vectorindex.NewError("search", "qdrant", tc.err)
			for _, s := range sentinels {
				if is, want := errors.Is(got, s), s == tc.want; is != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", got, s, is, want)
				}
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the backend error %v is not reachable from %v", tc.err, got)
			}
		})
	}
	if err := vectorindex.NewError("search", "qdrant", context.Canceled); err != context.Canceled {
		t.Errorf("NewError(context.Canceled) = %v, want it unchanged", err)
	}
}

func TestNew_PanicsOnDimensionConflict(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with 4 dimensions over an 8-dimension driver did not panic")
		}
	}()
	vectorindex.New(embeddedindex.New(8), &vectorindex.Options{Dimensions: 4})
}

func TestValidateFields(t *testing.T) {
	tests := []struct {
		name   string
		fields []vectorindex.FieldSchema
		ok     bool
	}{
		{"nil", nil, true},
		{"good", []vectorindex.FieldSchema{{Name: "kind", Type: vectorindex.FieldKeyword}, {Name: "level", Type: vectorindex.FieldNumber}}, true},
		{"duplicate", []vectorindex.FieldSchema{{Name: "kind", Type: vectorindex.FieldKeyword}, {Name: "kind", Type: vectorindex.FieldBool}}, false},
		{"reserved", []vectorindex.FieldSchema{{Name: "_key", Type: vectorindex.FieldKeyword}}, false},
		{"empty name", []vectorindex.FieldSchema{{Name: "", Type: vectorindex.FieldKeyword}}, false},
		{"unknown type", []vectorindex.FieldSchema{{Name: "x"}}, false},
	}
	for _, tc := range tests {
		err := vectorindex.ValidateFields(tc.fields)
		if got := err == nil; got != tc.ok {
			t.Errorf("%s: ValidateFields = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, vectorindex.ErrInvalidArgument) {
			t.Errorf("%s: %v is not ErrInvalidArgument", tc.name, err)
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	x, err := embeddedindex.Open(&vectorindex.Options{Dimensions: 2, Metrics: vectorindex.NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	pts := []vectorindex.Point{{ID: "a", Vector: []float32{1, 0}}, {ID: "b", Vector: []float32{0, 1}}, {ID: "c", Vector: []float32{1, 1}}}
	if err := x.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, pts[:1]); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := x.Search(ctx, []float32{1, 0}, nil, 2); err != nil {
			t.Fatal(err)
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	want := `
# HELP lorekeeper_vectorindex_points Points in the index after the last write or count, by backend.
# TYPE lorekeeper_vectorindex_points gauge
lorekeeper_vectorindex_points{backend="embedded"} 2
# HELP lorekeeper_vectorindex_upserts_total Points inserted or replaced, by backend.
# TYPE lorekeeper_vectorindex_upserts_total counter
lorekeeper_vectorindex_upserts_total{backend="embedded"} 4
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lorekeeper_vectorindex_points", "lorekeeper_vectorindex_upserts_total"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var searches uint64
	for _, mf := range mfs {
		if mf.GetName() == "lorekeeper_vectorindex_search_duration_seconds" {
			searches = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if searches != 3 {
		t.Errorf("search_duration_seconds count = %d, want 3", searches)
	}
}

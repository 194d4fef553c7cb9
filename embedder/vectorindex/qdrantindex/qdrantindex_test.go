package qdrantindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex/qdranttest"
	"lorekeeper.dev/embedder/vectorindex/vectorindextest"
)

// target is a Qdrant to test against: the stand-in, or a real server.
type target struct {
	name   string
	client *qdrant.Client
	stand  *qdranttest.Server // nil for a real Qdrant
}

// standIn starts the in-process stand-in on a loopback port.
func standIn(t *testing.T) target {
	t.Helper()
	s := qdranttest.New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return target{name: "standin", client: dial(t, s.Addr()), stand: s}
}

// realQdrant returns the Qdrant LOREKEEPER_TEST_QDRANT names (host:port of
// its gRPC API), or skips.
func realQdrant(t *testing.T) target {
	t.Helper()
	addr := os.Getenv("LOREKEEPER_TEST_QDRANT")
	if addr == "" {
		t.Skip("LOREKEEPER_TEST_QDRANT is not set; the stand-in variant ran instead")
	}
	return target{name: "qdrant", client: dial(t, addr)}
}

func dial(t *testing.T, addr string) *qdrant.Client {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("bad address %q: %v", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("bad port in %q: %v", addr, err)
	}
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatalf("qdrant client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var seq sync.Mutex
var seqN int

// collection returns a fresh collection name and drops it at cleanup.
func collection(t *testing.T, c *qdrant.Client) string {
	t.Helper()
	seq.Lock()
	seqN++
	name := fmt.Sprintf("lorekeeper_test_%d_%08x", seqN, rand.Uint32())
	seq.Unlock()
	t.Cleanup(func() { c.DeleteCollection(context.WithoutCancel(t.Context()), name) })
	return name
}

type harness struct {
	t  *testing.T
	tg target
}

func (h harness) MakeDriver(ctx context.Context, dims int, fields []driver.FieldSchema) (driver.Index, error) {
	return qdrantindex.New(ctx, h.tg.client, &qdrantindex.Options{
		Collection: collection(h.t, h.tg.client), Dimensions: dims, Fields: fields,
	})
}

func (harness) Close() {}

func targets(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Run("standin", func(t *testing.T) { fn(t, standIn(t)) })
	t.Run("qdrant", func(t *testing.T) { fn(t, realQdrant(t)) })
}

func TestConformance(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		vectorindextest.RunConformanceTests(t, func(_ context.Context, t *testing.T) (vectorindextest.Harness, error) {
			return harness{t: t, tg: tg}, nil
		})
	})
}

func TestNew_CreatesCollectionAndPayloadIndexes(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		name := collection(t, tg.client)
		x, err := qdrantindex.New(t.Context(), tg.client, &qdrantindex.Options{Collection: name, Dimensions: 16, Fields: vectorindextest.Schema})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if got := x.Collection(); got != name {
			t.Errorf("Collection() = %q, want %q", got, name)
		}
		info, err := tg.client.GetCollectionInfo(t.Context(), name)
		if err != nil {
			t.Fatalf("GetCollectionInfo: %v", err)
		}
		p := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
		if p.GetSize() != 16 || p.GetDistance() != qdrant.Distance_Cosine {
			t.Errorf("vectors = %d %v, want 16 Cosine", p.GetSize(), p.GetDistance())
		}
		want := map[driver.FieldType]qdrant.PayloadSchemaType{
			driver.FieldKeyword: qdrant.PayloadSchemaType_Keyword,
			driver.FieldNumber:  qdrant.PayloadSchemaType_Float,
			driver.FieldBool:    qdrant.PayloadSchemaType_Bool,
		}
		for _, f := range vectorindextest.Schema {
			got, ok := info.GetPayloadSchema()[f.Name]
			if !ok {
				t.Errorf("no payload index on %q before loading", f.Name)
				continue
			}
			if got.GetDataType() != want[f.Type] {
				t.Errorf("payload index %q is %v, want %v", f.Name, got.GetDataType(), want[f.Type])
			}
		}
	})
}

func TestNew_ReopensExistingCollection(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		name := collection(t, tg.client)
		opts := &qdrantindex.Options{Collection: name, Dimensions: 4, Fields: vectorindextest.Schema}
		d, err := qdrantindex.New(t.Context(), tg.client, opts)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		x := vectorindex.New(d, nil)
		if err := x.Upsert(t.Context(), []vectorindex.Point{{ID: "a", Vector: []float32{1, 0, 0, 0}}, {ID: "b", Vector: []float32{0, 1, 0, 0}}}); err != nil {
			t.Fatalf("Upsert: %v", err)
		}
		d2, err := qdrantindex.New(t.Context(), tg.client, opts)
		if err != nil {
			t.Fatalf("second New: %v", err)
		}
		if n, err := vectorindex.New(d2, nil).Count(t.Context()); err != nil || n != 2 {
			t.Errorf("Count() after reopen = %d, %v; want 2", n, err)
		}
	})
}

func TestNew_DimensionMismatch(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		name := collection(t, tg.client)
		if _, err := qdrantindex.New(t.Context(), tg.client, &qdrantindex.Options{Collection: name, Dimensions: 8}); err != nil {
			t.Fatalf("New: %v", err)
		}
		_, err := qdrantindex.New(t.Context(), tg.client, &qdrantindex.Options{Collection: name, Dimensions: 12})
		if !errors.Is(err, vectorindex.ErrDimensionMismatch) {
			t.Errorf("New(other dimensions) = %v, want ErrDimensionMismatch", err)
		}
	})
}

func TestIndex_CollectionDropped(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		name := collection(t, tg.client)
		d, err := qdrantindex.New(t.Context(), tg.client, &qdrantindex.Options{Collection: name, Dimensions: 4})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		x := vectorindex.New(d, nil)
		if err := tg.client.DeleteCollection(t.Context(), name); err != nil {
			t.Fatalf("DeleteCollection: %v", err)
		}
		_, err = x.Search(t.Context(), []float32{1, 0, 0, 0}, nil, 3)
		if !errors.Is(err, vectorindex.ErrNotFound) {
			t.Errorf("Search(dropped collection) = %v, want ErrNotFound", err)
		}
		if _, err := x.Count(t.Context()); !errors.Is(err, vectorindex.ErrNotFound) {
			t.Errorf("Count(dropped collection) = %v, want ErrNotFound", err)
		}
	})
}

func TestIndex_Unavailable(t *testing.T) {
	tg := standIn(t) // only the stand-in can be made unavailable on demand
	reg := prometheusRegistry()
	x, err := qdrantindex.Open(t.Context(), tg.client, &vectorindex.Options{Dimensions: 4, Model: "m", Metrics: vectorindex.NewMetrics(reg)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got := x.Backend(); got != "qdrant" {
		t.Errorf("Backend() = %q, want qdrant", got)
	}
	tg.stand.SetUnavailable(true)
	_, err = x.Search(t.Context(), []float32{1, 0, 0, 0}, nil, 3)
	if !errors.Is(err, vectorindex.ErrUnavailable) {
		t.Fatalf("Search(unavailable) = %v, want ErrUnavailable", err)
	}
	if s, ok := status.FromError(err); !ok || s.Code() != codes.Unavailable {
		t.Errorf("status of %v = %v, want the backend's Unavailable to stay reachable", err, s.Code())
	}
	var e *vectorindex.Error
	if !errors.As(err, &e) || e.Op != "search" || e.Backend != "qdrant" {
		t.Errorf("errors.As(%v) = %+v, want op search, backend qdrant", err, e)
	}
	if err := x.Upsert(t.Context(), []vectorindex.Point{{ID: "a", Vector: []float32{1, 0, 0, 0}}}); !errors.Is(err, vectorindex.ErrUnavailable) {
		t.Errorf("Upsert(unavailable) = %v, want ErrUnavailable", err)
	}
	if got := errorsTotal(t, reg, "qdrant", "search"); got != 1 {
		t.Errorf("errors_total{op=search} = %v, want 1", got)
	}
	tg.stand.SetUnavailable(false)
	if _, err := x.Search(t.Context(), []float32{1, 0, 0, 0}, nil, 3); err != nil {
		t.Errorf("Search after recovery = %v", err)
	}
	// Opening while Qdrant is down is classified too.
	tg.stand.SetUnavailable(true)
	if _, err := qdrantindex.Open(t.Context(), tg.client, &vectorindex.Options{Dimensions: 4, Model: "m"}); !errors.Is(err, vectorindex.ErrUnavailable) {
		t.Errorf("Open(unavailable) = %v, want ErrUnavailable", err)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestPointID(t *testing.T) {
	keys := []string{"open5e_v2:srd-2014:spell:fireball", "open5e_v2:srd-2014:spell:fireballs", "orcbrew:book:spell:fireball", ""}
	seen := map[string]string{}
	for _, k := range keys {
		id := qdrantindex.PointID(k)
		if !uuidRE.MatchString(id) {
			t.Errorf("PointID(%q) = %q, not a version 5 RFC 4122 UUID", k, id)
		}
		if again := qdrantindex.PointID(k); again != id {
			t.Errorf("PointID(%q) is not deterministic: %q then %q", k, id, again)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("PointID(%q) = PointID(%q) = %q", k, other, id)
		}
		seen[id] = k
	}
	// Stored points are addressed by these IDs: changing the derivation
	// orphans every point of an existing collection, so it is pinned.
	if got, want := qdrantindex.PointID("open5e_v2:srd-2014:spell:fireball"), pinnedFireballID; got != want {
		t.Errorf("PointID(fireball) = %q, want %q (the derivation changed)", got, want)
	}
}

func TestCollectionName(t *testing.T) {
	tests := []struct{ model, want string }{
		{"use-lite", "lorekeeper_use-lite"},
		{"all-MiniLM-L6-v2", "lorekeeper_all-MiniLM-L6-v2"},
		{"org/model:v1.2", "lorekeeper_org_model_v1_2"},
		{"", "lorekeeper_default"},
	}
	for _, tc := range tests {
		if got := qdrantindex.CollectionName(tc.model); got != tc.want {
			t.Errorf("CollectionName(%q) = %q, want %q", tc.model, got, tc.want)
		}
	}
}

func TestIndex_DefaultTimeout(t *testing.T) {
	tg := standIn(t) // only the stand-in can be slowed on demand
	d, err := qdrantindex.New(t.Context(), tg.client, &qdrantindex.Options{
		Collection: collection(t, tg.client), Dimensions: 4, Timeout: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	x := vectorindex.New(d, nil)
	tg.stand.SetDelay(time.Minute)
	t.Cleanup(func() { tg.stand.SetDelay(0) })
	// The caller set no deadline: the driver's default bounds the call.
	_, err = x.Search(t.Context(), []float32{1, 0, 0, 0}, nil, 3)
	if !errors.Is(err, vectorindex.ErrUnavailable) {
		t.Errorf("Search(hung Qdrant) = %v, want ErrUnavailable", err)
	}
	// A caller's own deadline is kept, and its expiry is the caller's error.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := x.Count(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Count(caller deadline) = %v, want context.DeadlineExceeded", err)
	}
}

package qdranttest_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/vectorindex/qdrantindex/qdranttest"
)

func client(t *testing.T) *qdrant.Client {
	t.Helper()
	s := qdranttest.New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	host, port, _ := net.SplitHostPort(s.Addr())
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func code(err error) codes.Code {
	s, _ := status.FromError(err)
	return s.Code()
}

func TestServer_HealthCheck(t *testing.T) {
	c := client(t)
	got, err := c.HealthCheck(t.Context())
	if err != nil {
		t.Fatalf("HealthCheck: %v", err)
	}
	if got.GetVersion() != qdranttest.Version {
		t.Errorf("version = %q, want %q", got.GetVersion(), qdranttest.Version)
	}
}

func TestServer_Errors(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	create := func(name string) error {
		return c.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: name,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 3, Distance: qdrant.Distance_Cosine}),
		})
	}
	if err := create("c"); err != nil {
		t.Fatalf("CreateCollection: %v", err)
	}
	tests := []struct {
		name string
		err  error
		want codes.Code
	}{
		{"create existing", create("c"), codes.AlreadyExists},
		{"get missing", func() error { _, err := c.GetCollectionInfo(ctx, "nope"); return err }(), codes.NotFound},
		{"upsert into missing", func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "nope", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0, 0)}}})
			return err
		}(), codes.NotFound},
		{"wrong dimension", func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0)}}})
			return err
		}(), codes.InvalidArgument},
		{"bad uuid", func() error {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewID("not-a-uuid"), Vectors: qdrant.NewVectors(1, 0, 0)}}})
			return err
		}(), codes.InvalidArgument},
		{"unimplemented facet", func() error { _, err := c.Facet(ctx, &qdrant.FacetCounts{CollectionName: "c", Key: "f"}); return err }(), codes.Unimplemented},
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0, 0)}}}); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	_, textErr := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("f", "x")}}})
	for _, tc := range tests {
		if got := code(tc.err); got != tc.want {
			t.Errorf("%s: code = %v (%v), want %v", tc.name, got, tc.err, tc.want)
		}
	}
	// A text match on a missing field is simply false (as in Qdrant); on a
	// present field the stand-in says it cannot evaluate it.
	if textErr != nil {
		t.Errorf("text match on a missing field = %v, want no error", textErr)
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(0, 1, 0), Payload: qdrant.NewValueMap(map[string]any{"f": "x y"})}}}); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("f", "x")}}})
	if got := code(err); got != codes.Unimplemented {
		t.Errorf("text match: code = %v, want Unimplemented", got)
	}
}

func TestServer_QueryWithoutVectorListsByID(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(3), Vectors: qdrant.NewVectors(1, 0)},
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(0, 2)},
		{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(3, 0)},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, p := range res {
		got = append(got, p.GetId().GetNum())
	}
	if want := []uint64{1, 2, 3}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Query() ids = %v, want %v", got, want)
	}
	// Dot distance is not normalised: the longer vector scores higher.
	res, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQuery(1, 0), Limit: qdrant.PtrOf(uint64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].GetId().GetNum() != 2 || res[0].GetScore() != 3 {
		t.Errorf("Query(dot) = %v, want point 2 with score 3", res)
	}
}

func TestServer_ScrollPagesInIDOrder(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	ids := []*qdrant.PointId{
		qdrant.NewIDUUID("00000000-0000-0000-0000-000000000002"), qdrant.NewIDNum(10),
		qdrant.NewIDNum(9), qdrant.NewIDUUID("00000000-0000-0000-0000-000000000001"), qdrant.NewIDNum(100),
	}
	var pts []*qdrant.PointStruct
	for _, id := range ids {
		pts = append(pts, &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectors(1, 1)})
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: pts}); err != nil {
		t.Fatal(err)
	}
	var got []string
	var offset *qdrant.PointId
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("scroll does not end")
		}
		res, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Offset: offset, Limit: qdrant.PtrOf(uint32(2))})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res {
			if u := p.GetId().GetUuid(); u != "" {
				got = append(got, u[len(u)-1:])
			} else {
				got = append(got, strconv.FormatUint(p.GetId().GetNum(), 10))
			}
		}
		if next == nil {
			break
		}
		offset = next
	}
	// Qdrant orders numeric IDs before UUIDs, numbers by value.
	want := []string{"9", "10", "100", "1", "2"}
	if len(got) != len(want) {
		t.Fatalf("scrolled %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("scrolled %v, want %v", got, want)
		}
	}
}

func TestServer_FilterClauses(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	payloads := []map[string]any{
		{"kind": "spell", "level": 3, "tags": []any{"fire", "aoe"}},
		{"kind": "spell", "level": 1.5, "tags": []any{"cold"}},
		{"kind": "creature", "cr": 2, "tags": []any{}},
		{"kind": "creature", "note": nil},
	}
	var pts []*qdrant.PointStruct
	for i, p := range payloads {
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectors(1, float32(i)), Payload: qdrant.NewValueMap(p)})
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    *qdrant.Filter
		want uint64
	}{
		{"none", nil, 4},
		{"must keyword", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "spell")}}, 2},
		{"must_not keyword", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "spell")}}, 2},
		{"should any", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("tags", "cold"), qdrant.NewMatchKeyword("tags", "aoe")}}, 2},
		{"range on int and double", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("level", &qdrant.Range{Gte: qdrant.PtrOf(1.5)})}}, 2},
		{"range exclusive", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("level", &qdrant.Range{Gt: qdrant.PtrOf(1.5)})}}, 1},
		{"match integer", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("cr", 2)}}, 1},
		{"is empty: missing, null or []", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsEmpty("tags")}}, 2},
		{"is null", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsNull("note")}}, 1},
		{"has id", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(2), qdrant.NewIDNum(9))}}, 1},
		{"nested filter", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(&qdrant.Filter{
			Should: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "creature"), qdrant.NewMatchKeywords("tags", "fire")},
		})}}, 3},
	}
	for _, tc := range tests {
		got, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: tc.f, Exact: qdrant.PtrOf(true)})
		if err != nil {
			t.Errorf("%s: Count: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: Count = %d, want %d", tc.name, got, tc.want)
		}
	}
	// Delete by filter removes exactly the matching points.
	if _, err := c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true),
		Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("kind", "creature")}})}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil || got != 2 {
		t.Errorf("Count after delete by filter = %d, %v; want 2", got, err)
	}
}

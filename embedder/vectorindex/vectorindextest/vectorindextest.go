// Package vectorindextest is the contract every vector index driver meets:
// RunConformanceTests runs one suite, through the portable vectorindex.Index,
// against a driver the harness makes.
package vectorindextest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/driver"
)

// Harness makes drivers for the suite.
type Harness interface {
	// MakeDriver returns a new, empty driver for vectors of dims dimensions
	// whose payload schema is fields. Each call must return an index that
	// shares no points with earlier ones.
	MakeDriver(ctx context.Context, dims int, fields []driver.FieldSchema) (driver.Index, error)
	// Close releases the harness's resources.
	Close()
}

// HarnessMaker makes a Harness for one test.
type HarnessMaker func(ctx context.Context, t *testing.T) (Harness, error)

// Schema is the payload schema the suite uses: the shape of LoreKeeper's.
var Schema = []driver.FieldSchema{
	{Name: "kind", Type: driver.FieldKeyword},
	{Name: "document", Type: driver.FieldKeyword},
	{Name: "classes", Type: driver.FieldKeyword},
	{Name: "school", Type: driver.FieldKeyword},
	{Name: "level", Type: driver.FieldNumber},
	{Name: "challenge_rating", Type: driver.FieldNumber},
	{Name: "ritual", Type: driver.FieldBool},
	{Name: "concentration", Type: driver.FieldBool},
}

// RunConformanceTests runs the suite against the drivers newHarness makes.
func RunConformanceTests(t *testing.T, newHarness HarnessMaker) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"Empty", testEmpty},
		{"UpsertIdempotent", testUpsertIdempotent},
		{"UpsertReplaces", testUpsertReplaces},
		{"UpsertDuplicateIDsInBatch", testUpsertDuplicateIDs},
		{"Delete", testDelete},
		{"DimensionMismatch", testDimensionMismatch},
		{"InvalidArguments", testInvalidArguments},
		{"Ordering", testOrdering},
		{"ScaleInvariance", testScaleInvariance},
		{"Limit", testLimit},
		{"Scores", testScores},
		{"ScoresOfEmbeddings", testScoresOfEmbeddings},
		{"Filters", testFilters},
		{"FiltersOnFieldsNoPointHolds", testFiltersNoHolder},
		{"InvalidFilter", testInvalidFilter},
		{"NotFound", testNotFound},
		{"ConcurrentSearchDuringUpsert", testConcurrent},
		{"BulkUpsert", testBulk},
		{"CanceledContext", testCanceled},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHarness(t.Context(), t)
			if err != nil {
				t.Fatalf("new harness: %v", err)
			}
			t.Cleanup(h.Close)
			tc.fn(t, h)
		})
	}
}

const dims = 8

// tolerance is how far a score may be from the exact cosine here: the
// drivers allow more for vectors of many dimensions (embeddingTolerance),
// and the embedded one keeps these 8-dimensional points in 16-bit fixed
// point, whose rounding stays under sqrt(8)/32767 < 1e-4.
const tolerance = 1e-4

// embeddingDims and embeddingTolerance are testScoresOfEmbeddings' vectors
// and how far their scores may be from the exact cosine (driver.Hit).
const (
	embeddingDims      = 512
	embeddingTolerance = 2e-3
)

func open(t *testing.T, h Harness, d int) *vectorindex.Index {
	t.Helper()
	drv, err := h.MakeDriver(t.Context(), d, Schema)
	if err != nil {
		t.Fatalf("make driver: %v", err)
	}
	x := vectorindex.New(drv, &vectorindex.Options{Dimensions: d, Fields: Schema})
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// axis returns the unit vector cos(theta)*e0 + sin(theta)*e1: its cosine
// similarity to e0 is cos(theta).
func axis(theta float64) []float32 {
	v := make([]float32, dims)
	v[0] = float32(math.Cos(theta))
	v[1] = float32(math.Sin(theta))
	return v
}

func e(i int) []float32 {
	v := make([]float32, dims)
	v[i] = 1
	return v
}

func upsert(t *testing.T, x *vectorindex.Index, pts ...vectorindex.Point) {
	t.Helper()
	if err := x.Upsert(t.Context(), pts); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func count(t *testing.T, x *vectorindex.Index) int {
	t.Helper()
	n, err := x.Count(t.Context())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	return n
}

func search(t *testing.T, x *vectorindex.Index, q []float32, f *vectorindex.Filter, limit int) []vectorindex.Hit {
	t.Helper()
	hits, err := x.Search(t.Context(), q, f, limit)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	checkSorted(t, hits)
	return hits
}

func checkSorted(t *testing.T, hits []vectorindex.Hit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("hits not by score, highest first: %v", hits)
		}
	}
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.ID] {
			t.Fatalf("hit %q twice: %v", h.ID, hits)
		}
		seen[h.ID] = true
		if h.Score < -1.001 || h.Score > 1.001 {
			t.Fatalf("hit %q has score %v outside [-1, 1]", h.ID, h.Score)
		}
	}
}

func ids(hits []vectorindex.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func testEmpty(t *testing.T, h Harness) {
	x := open(t, h, dims)
	if got := count(t, x); got != 0 {
		t.Errorf("Count() = %d, want 0", got)
	}
	if got := search(t, x, e(0), nil, 10); len(got) != 0 {
		t.Errorf("Search() on empty index = %v, want none", got)
	}
	f := &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}}
	if got := search(t, x, e(0), f, 10); len(got) != 0 {
		t.Errorf("filtered Search() on empty index = %v, want none", got)
	}
}

func testUpsertIdempotent(t *testing.T, h Harness) {
	x := open(t, h, dims)
	pts := []vectorindex.Point{
		{ID: "a", Vector: e(0)}, {ID: "b", Vector: e(1)}, {ID: "c", Vector: e(2)},
	}
	for round := 1; round <= 3; round++ {
		upsert(t, x, pts...)
		if got := count(t, x); got != 3 {
			t.Fatalf("after upsert #%d Count() = %d, want 3", round, got)
		}
	}
	got := search(t, x, e(1), nil, 10)
	if len(got) != 3 || got[0].ID != "b" {
		t.Fatalf("Search(e1) = %v, want b first of 3", got)
	}
	if math.Abs(float64(got[0].Score)-1) > tolerance {
		t.Errorf("score of identical vector = %v, want 1", got[0].Score)
	}
}

func testUpsertReplaces(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x,
		vectorindex.Point{ID: "p", Vector: e(0), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"spell"}}}},
		vectorindex.Point{ID: "q", Vector: e(1), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"spell"}}}},
	)
	upsert(t, x, vectorindex.Point{ID: "p", Vector: e(2), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"creature"}}}})
	if got := count(t, x); got != 2 {
		t.Errorf("Count() = %d, want 2", got)
	}
	got := search(t, x, e(2), nil, 1)
	if len(got) != 1 || got[0].ID != "p" || math.Abs(float64(got[0].Score)-1) > tolerance {
		t.Errorf("Search(new vector) = %v, want p with score 1", got)
	}
	got = search(t, x, e(0), &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}}, 10)
	if want := []string{"q"}; !slices.Equal(ids(got), want) {
		t.Errorf("Search(kind=spell) = %v, want %v (the old payload is gone)", ids(got), want)
	}
	got = search(t, x, e(0), &vectorindex.Filter{Keywords: map[string][]string{"kind": {"creature"}}}, 10)
	if want := []string{"p"}; !slices.Equal(ids(got), want) {
		t.Errorf("Search(kind=creature) = %v, want %v", ids(got), want)
	}
}

func testUpsertDuplicateIDs(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, vectorindex.Point{ID: "d", Vector: e(0)}, vectorindex.Point{ID: "d", Vector: e(3)})
	if got := count(t, x); got != 1 {
		t.Errorf("Count() = %d, want 1", got)
	}
	got := search(t, x, e(3), nil, 5)
	if len(got) != 1 || got[0].ID != "d" || math.Abs(float64(got[0].Score)-1) > tolerance {
		t.Errorf("Search(e3) = %v, want d with score 1 (the last point of a batch wins)", got)
	}
}

func testDelete(t *testing.T, h Harness) {
	x := open(t, h, dims)
	for i := range 5 {
		upsert(t, x, vectorindex.Point{ID: fmt.Sprint("k", i), Vector: e(i)})
	}
	if err := x.Delete(t.Context(), []string{"k1", "k3", "missing"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := count(t, x); got != 3 {
		t.Errorf("Count() after delete = %d, want 3", got)
	}
	got := ids(search(t, x, e(1), nil, 10))
	slices.Sort(got)
	if want := []string{"k0", "k2", "k4"}; !slices.Equal(got, want) {
		t.Errorf("Search() after delete = %v, want %v", got, want)
	}
	left, err := x.IDs(t.Context(), nil)
	if err != nil {
		t.Fatalf("IDs: %v", err)
	}
	slices.Sort(left)
	if want := []string{"k0", "k2", "k4"}; !slices.Equal(left, want) {
		t.Errorf("IDs() after delete = %v, want %v", left, want)
	}
	// Deleting again, and deleting nothing, are not errors.
	if err := x.Delete(t.Context(), []string{"k1", "k3"}); err != nil {
		t.Errorf("Delete(already deleted) = %v, want nil", err)
	}
	if err := x.Delete(t.Context(), nil); err != nil {
		t.Errorf("Delete(nil) = %v, want nil", err)
	}
	if got := count(t, x); got != 3 {
		t.Errorf("Count() after repeated delete = %d, want 3", got)
	}
	// A deleted point can come back.
	upsert(t, x, vectorindex.Point{ID: "k1", Vector: e(1)})
	if got := search(t, x, e(1), nil, 1); len(got) != 1 || got[0].ID != "k1" {
		t.Errorf("Search(e1) after re-insert = %v, want k1", got)
	}
}

func testDimensionMismatch(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, vectorindex.Point{ID: "ok", Vector: e(0)})
	for _, n := range []int{dims - 1, dims + 1, 0} {
		bad := make([]float32, n)
		if n > 0 {
			bad[0] = 1
		}
		err := x.Upsert(t.Context(), []vectorindex.Point{{ID: "new", Vector: e(1)}, {ID: "bad", Vector: bad}})
		if !errors.Is(err, vectorindex.ErrDimensionMismatch) {
			t.Errorf("Upsert(%d dims) = %v, want ErrDimensionMismatch", n, err)
		}
		if _, err := x.Search(t.Context(), bad, nil, 5); !errors.Is(err, vectorindex.ErrDimensionMismatch) {
			t.Errorf("Search(%d dims) = %v, want ErrDimensionMismatch", n, err)
		}
	}
	if got := count(t, x); got != 1 {
		t.Errorf("Count() = %d, want 1: a rejected batch writes nothing", got)
	}
}

func testInvalidArguments(t *testing.T, h Harness) {
	x := open(t, h, dims)
	nan := e(0)
	nan[1] = float32(math.NaN())
	tests := []struct {
		name string
		call func() error
	}{
		{"empty id", func() error { return x.Upsert(t.Context(), []vectorindex.Point{{ID: "", Vector: e(0)}}) }},
		{"zero vector", func() error {
			return x.Upsert(t.Context(), []vectorindex.Point{{ID: "z", Vector: make([]float32, dims)}})
		}},
		{"NaN vector", func() error { return x.Upsert(t.Context(), []vectorindex.Point{{ID: "n", Vector: nan}}) }},
		{"payload type against schema", func() error {
			return x.Upsert(t.Context(), []vectorindex.Point{{ID: "l", Vector: e(0), Payload: vectorindex.Payload{Keywords: map[string][]string{"level": {"3"}}}}})
		}},
		{"reserved payload name", func() error {
			return x.Upsert(t.Context(), []vectorindex.Point{{ID: "r", Vector: e(0), Payload: vectorindex.Payload{Keywords: map[string][]string{"_key": {"x"}}}}})
		}},
		{"zero query", func() error { _, err := x.Search(t.Context(), make([]float32, dims), nil, 5); return err }},
		{"limit 0", func() error { _, err := x.Search(t.Context(), e(0), nil, 0); return err }},
		{"empty delete id", func() error { return x.Delete(t.Context(), []string{""}) }},
	}
	for _, tc := range tests {
		if err := tc.call(); !errors.Is(err, vectorindex.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	if got := count(t, x); got != 0 {
		t.Errorf("Count() = %d, want 0", got)
	}
}

// upsertAngled stores seven points at known angles from e0, out of order
// (cosine decreases with the angle), and returns the angles by ID.
func upsertAngled(t *testing.T, x *vectorindex.Index) map[string]float64 {
	t.Helper()
	angles := map[string]float64{"a": 0.1, "b": 0.5, "c": 0.9, "d": 1.3, "e": 1.9, "f": 2.6, "g": 3.0}
	var pts []vectorindex.Point
	for _, id := range []string{"d", "g", "a", "f", "c", "e", "b"} {
		pts = append(pts, vectorindex.Point{ID: id, Vector: axis(angles[id])})
	}
	upsert(t, x, pts...)
	return angles
}

// testScoresOfEmbeddings: vectors shaped like an embedding model's (512
// dense dimensions, the shape the embedded driver keeps in 8 bits) score
// within embeddingTolerance of their exact cosine through Scores and
// Search, also after deletes moved other points into their rows, and
// Search ranks them by it.
func testScoresOfEmbeddings(t *testing.T, h Harness) {
	x := open(t, h, embeddingDims)
	r := rand.New(rand.NewPCG(11, 12))
	dense := func() []float64 {
		v := make([]float64, embeddingDims)
		var n float64
		for i := range v {
			v[i] = r.NormFloat64()
			n += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(n)
		}
		return v
	}
	const n = 400
	vecs := map[string][]float64{}
	var pts []vectorindex.Point
	var ids []string
	for i := range n {
		id := fmt.Sprint("v", i)
		v := dense()
		vecs[id] = v
		ids = append(ids, id)
		f := make([]float32, len(v))
		for j, c := range v {
			f[j] = float32(c * 3) // not unit length: drivers normalise
		}
		pts = append(pts, vectorindex.Point{ID: id, Vector: f})
	}
	upsert(t, x, pts...)
	// Deletes move the last rows into the holes (embedded driver).
	var gone []string
	for i := 0; i < n; i += 7 {
		gone = append(gone, ids[i])
		delete(vecs, ids[i])
	}
	if err := x.Delete(t.Context(), gone); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return vecs[id] == nil })
	var worst float64
	for qi := range 10 {
		// A query near a point (as a question near its answer) and one at
		// random.
		qv := dense()
		if qi%2 == 0 {
			p := vecs[ids[r.IntN(len(ids))]]
			for j := range qv {
				qv[j] = p[j] + 0.5*qv[j]
			}
		}
		q := make([]float32, len(qv))
		var qn float64
		for j, c := range qv {
			q[j] = float32(c)
			qn += c * c
		}
		exact := func(id string) float64 {
			var d float64
			for j, c := range vecs[id] {
				d += c * qv[j]
			}
			return d / math.Sqrt(qn)
		}
		got, err := x.Scores(t.Context(), q, ids, nil)
		if err != nil {
			t.Fatalf("Scores: %v", err)
		}
		for i, id := range ids {
			d := math.Abs(float64(got[i]) - exact(id))
			worst = max(worst, d)
			if d > embeddingTolerance {
				t.Errorf("query %d: score of %s = %v, cosine %v", qi, id, got[i], exact(id))
			}
		}
		hits := search(t, x, q, nil, len(ids))
		if len(hits) != len(ids) {
			t.Fatalf("query %d: Search gave %d hits of %d points", qi, len(hits), len(ids))
		}
		for k, hit := range hits {
			if d := math.Abs(float64(hit.Score) - exact(hit.ID)); d > embeddingTolerance {
				t.Errorf("query %d: Search scores %s %v, cosine %v", qi, hit.ID, hit.Score, exact(hit.ID))
			}
			// Ranked by the cosine, up to the scores' own error.
			if k > 0 && exact(hit.ID) > exact(hits[k-1].ID)+2*embeddingTolerance {
				t.Errorf("query %d: Search ranks %s (cosine %v) below %s (%v)", qi, hit.ID, exact(hit.ID), hits[k-1].ID, exact(hits[k-1].ID))
			}
		}
	}
	t.Logf("largest difference from the cosine: %.2g", worst)
}

func testOrdering(t *testing.T, h Harness) {
	x := open(t, h, dims)
	angles := upsertAngled(t, x)
	got := search(t, x, e(0), nil, 10)
	if want := []string{"a", "b", "c", "d", "e", "f", "g"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Search() order = %v, want %v", ids(got), want)
	}
	for _, hit := range got {
		if want := math.Cos(angles[hit.ID]); math.Abs(float64(hit.Score)-want) > tolerance {
			t.Errorf("score of %s = %v, want cos = %v", hit.ID, hit.Score, want)
		}
	}
}

func testScaleInvariance(t *testing.T, h Harness) {
	x := open(t, h, dims)
	v := []float32{3, -1, 0.5, 2, 0, 0, 7, 1}
	big := make([]float32, dims)
	for i := range v {
		big[i] = v[i] * 1000
	}
	upsert(t, x, vectorindex.Point{ID: "big", Vector: big}, vectorindex.Point{ID: "other", Vector: e(5)})
	got := search(t, x, v, nil, 1)
	if len(got) != 1 || got[0].ID != "big" || math.Abs(float64(got[0].Score)-1) > tolerance {
		t.Errorf("Search(v) = %v, want big with cosine 1 whatever the norms", got)
	}
}

// testScores: Scores gives every asked point its similarity, in the order
// asked (repeats included), NaN for unknown IDs, the values Search gives
// (within tolerance), and validates its input like Search.
func testScores(t *testing.T, h Harness) {
	x := open(t, h, dims)
	angles := upsertAngled(t, x)
	q := axis(0.2)
	asked := []string{"g", "absent", "a", "c", "a", "e"}
	got, err := x.Scores(t.Context(), q, asked, nil)
	if err != nil {
		t.Fatalf("Scores: %v", err)
	}
	if len(got) != len(asked) {
		t.Fatalf("Scores returned %d scores for %d ids", len(got), len(asked))
	}
	byID := map[string]float32{}
	for _, hit := range search(t, x, q, nil, 10) {
		byID[hit.ID] = hit.Score
	}
	for i, id := range asked {
		want, ok := byID[id]
		switch {
		case !ok && !math.IsNaN(float64(got[i])):
			t.Errorf("score %d (%s, not in the index) = %v, want NaN", i, id, got[i])
		case ok && math.Abs(float64(got[i]-want)) > tolerance:
			t.Errorf("score %d (%s) = %v, want %v as Search gives", i, id, got[i], want)
		case ok && math.Abs(float64(got[i])-math.Cos(angles[id]-0.2)) > tolerance:
			t.Errorf("score %d (%s) = %v, want cos = %v", i, id, got[i], math.Cos(angles[id]-0.2))
		}
	}
	// The same list again after writes that move, remove and add points,
	// and after the caller changed its list in place: fresh answers, into
	// the caller's buffer, every place written (what it held before is
	// no score).
	buf := make([]float32, 0, 8)
	check := func(what string, asked []string) {
		t.Helper()
		for i := range buf[:cap(buf)] {
			buf[:cap(buf)][i] = 99
		}
		got, err := x.Scores(t.Context(), q, asked, buf)
		if err != nil {
			t.Fatalf("%s: Scores: %v", what, err)
		}
		if &got[0] != &buf[:1][0] {
			t.Errorf("%s: Scores did not use the buffer it was given", what)
		}
		present := map[string]bool{}
		for _, hit := range search(t, x, q, nil, 20) {
			present[hit.ID] = true
		}
		for i, id := range asked {
			want := float32(math.NaN())
			if present[id] {
				want = float32(math.Cos(angles[id] - 0.2))
			}
			if math.IsNaN(float64(want)) != math.IsNaN(float64(got[i])) || math.Abs(float64(got[i]-want)) > tolerance {
				t.Errorf("%s: score %d (%s) = %v, want %v", what, i, id, got[i], want)
			}
		}
	}
	list := []string{"a", "b", "g", "z", "d"}
	check("first", list)
	check("again", list)
	if err := x.Delete(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	check("after deleting a", list)
	angles["z"] = 0.3
	upsert(t, x, vectorindex.Point{ID: "z", Vector: axis(0.3)})
	check("after adding z", list)
	list[1] = "c"
	check("after the caller changed its list", list)

	if got, err := x.Scores(t.Context(), q, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("Scores(no ids) = %v, %v; want none", got, err)
	}
	if _, err := x.Scores(t.Context(), q, []string{"a", ""}, nil); !errors.Is(err, vectorindex.ErrInvalidArgument) {
		t.Errorf("Scores(empty id) = %v, want ErrInvalidArgument", err)
	}
	if _, err := x.Scores(t.Context(), make([]float32, dims), []string{"a"}, nil); !errors.Is(err, vectorindex.ErrInvalidArgument) {
		t.Errorf("Scores(zero vector) = %v, want ErrInvalidArgument", err)
	}
	if _, err := x.Scores(t.Context(), q[:dims-1], []string{"a"}, nil); !errors.Is(err, vectorindex.ErrDimensionMismatch) {
		t.Errorf("Scores(short vector) = %v, want ErrDimensionMismatch", err)
	}
}

func testLimit(t *testing.T, h Harness) {
	x := open(t, h, dims)
	var pts []vectorindex.Point
	for i := range 10 {
		pts = append(pts, vectorindex.Point{ID: fmt.Sprintf("p%02d", i), Vector: axis(0.1 + 0.25*float64(i))})
	}
	upsert(t, x, pts...)
	all := search(t, x, e(0), nil, 100)
	if len(all) != 10 {
		t.Fatalf("Search(limit 100) returned %d hits, want 10", len(all))
	}
	for _, limit := range []int{1, 3, 9, 10} {
		got := search(t, x, e(0), nil, limit)
		if !slices.Equal(ids(got), ids(all[:limit])) {
			t.Errorf("Search(limit %d) = %v, want %v", limit, ids(got), ids(all[:limit]))
		}
	}
}

func ptr(f float64) *float64 { return &f }

// spells is the filter fixture; each spell's vector is axis(angle), so the
// expected order is by angle.
func spells() []vectorindex.Point {
	type sp struct {
		id      string
		angle   float64
		kind    string
		school  string
		classes []string
		level   float64
		ritual  bool
		conc    *bool
	}
	yes, no := true, false
	data := []sp{
		{"fireball", 0.1, "spell", "evocation", []string{"sorcerer", "wizard"}, 3, false, &no},
		{"detect-magic", 0.2, "spell", "divination", []string{"bard", "cleric", "wizard"}, 1, true, &yes},
		{"hold-person", 0.3, "spell", "enchantment", []string{"bard", "cleric", "wizard"}, 2, false, &yes},
		{"wish", 0.4, "spell", "conjuration", []string{"sorcerer", "wizard"}, 9, false, &no},
		{"guidance", 0.5, "spell", "divination", []string{"cleric", "druid"}, 0, false, &yes},
		{"find-familiar", 0.6, "spell", "conjuration", []string{"wizard"}, 1, true, nil},
	}
	var pts []vectorindex.Point
	for _, s := range data {
		p := vectorindex.Point{ID: s.id, Vector: axis(s.angle), Payload: vectorindex.Payload{
			Keywords: map[string][]string{"kind": {s.kind}, "school": {s.school}, "classes": s.classes, "document": {"srd"}},
			Numbers:  map[string]float64{"level": s.level},
			Bools:    map[string]bool{"ritual": s.ritual},
		}}
		if s.conc != nil {
			p.Payload.Bools["concentration"] = *s.conc
		}
		pts = append(pts, p)
	}
	pts = append(pts, vectorindex.Point{ID: "goblin", Vector: axis(0.05), Payload: vectorindex.Payload{
		Keywords: map[string][]string{"kind": {"creature"}, "document": {"srd"}},
		Numbers:  map[string]float64{"challenge_rating": 0.25},
	}})
	return pts
}

func testFilters(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, spells()...)
	tests := []struct {
		name string
		f    *vectorindex.Filter
		want []string // by score
	}{
		{"nil", nil, []string{"goblin", "fireball", "detect-magic", "hold-person", "wish", "guidance", "find-familiar"}},
		{"empty filter", &vectorindex.Filter{}, []string{"goblin", "fireball", "detect-magic", "hold-person", "wish", "guidance", "find-familiar"}},
		{"keyword", &vectorindex.Filter{Keywords: map[string][]string{"kind": {"creature"}}}, []string{"goblin"}},
		{"keyword any of", &vectorindex.Filter{Keywords: map[string][]string{"school": {"divination", "evocation"}}}, []string{"fireball", "detect-magic", "guidance"}},
		{"keyword in a list field", &vectorindex.Filter{Keywords: map[string][]string{"classes": {"druid"}}}, []string{"guidance"}},
		{"keyword list any of", &vectorindex.Filter{Keywords: map[string][]string{"classes": {"sorcerer", "druid"}}}, []string{"fireball", "wish", "guidance"}},
		{"keyword no match", &vectorindex.Filter{Keywords: map[string][]string{"school": {"necromancy"}}}, nil},
		{"two keyword fields", &vectorindex.Filter{Keywords: map[string][]string{"classes": {"wizard"}, "school": {"conjuration"}}}, []string{"wish", "find-familiar"}},
		{"range min inclusive", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(3)}}}, []string{"fireball", "wish"}},
		{"range max inclusive", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Max: ptr(1)}}}, []string{"detect-magic", "guidance", "find-familiar"}},
		{"range both", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(1), Max: ptr(2)}}}, []string{"detect-magic", "hold-person", "find-familiar"}},
		{"range exact", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(0), Max: ptr(0)}}}, []string{"guidance"}},
		{"range empty", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(5), Max: ptr(4)}}}, nil},
		{"range fractional", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"challenge_rating": {Max: ptr(0.5)}}}, []string{"goblin"}},
		{"bool true", &vectorindex.Filter{Bools: map[string]bool{"ritual": true}}, []string{"detect-magic", "find-familiar"}},
		{"bool false", &vectorindex.Filter{Bools: map[string]bool{"ritual": false}}, []string{"fireball", "hold-person", "wish", "guidance"}},
		{"bool missing field does not match", &vectorindex.Filter{Bools: map[string]bool{"concentration": false}}, []string{"fireball", "wish"}},
		{"range missing field does not match", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(-100)}}}, []string{"fireball", "detect-magic", "hold-person", "wish", "guidance", "find-familiar"}},
		{"all kinds", &vectorindex.Filter{
			Keywords: map[string][]string{"classes": {"wizard"}},
			Ranges:   map[string]vectorindex.Range{"level": {Min: ptr(1)}},
			Bools:    map[string]bool{"ritual": false},
		}, []string{"fireball", "hold-person", "wish"}},
		{"ids", &vectorindex.Filter{IDs: []string{"guidance", "goblin", "wish"}}, []string{"goblin", "wish", "guidance"}},
		{"ids with unknown and repeated", &vectorindex.Filter{IDs: []string{"wish", "nope", "wish", "fireball"}}, []string{"fireball", "wish"}},
		{"ids only unknown", &vectorindex.Filter{IDs: []string{"nope", "nada"}}, nil},
		{"ids empty matches nothing", &vectorindex.Filter{IDs: []string{}}, nil},
		{"ids and keyword", &vectorindex.Filter{IDs: []string{"goblin", "wish", "guidance"}, Keywords: map[string][]string{"kind": {"spell"}}}, []string{"wish", "guidance"}},
		{"ids and range", &vectorindex.Filter{IDs: []string{"fireball", "detect-magic", "wish"}, Ranges: map[string]vectorindex.Range{"level": {Max: ptr(3)}}}, []string{"fireball", "detect-magic"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(search(t, x, e(0), tc.f, 20))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Search() = %v, want %v", got, tc.want)
			}
			// IDs (the scroll) selects the same points.
			all, err := x.IDs(t.Context(), tc.f)
			if err != nil {
				t.Fatalf("IDs: %v", err)
			}
			slices.Sort(all)
			want := slices.Sorted(slices.Values(tc.want))
			if len(all) == 0 {
				all = nil
			}
			if !slices.Equal(all, want) {
				t.Errorf("IDs() = %v, want %v", all, want)
			}
		})
	}
	t.Run("filter with limit", func(t *testing.T) {
		f := &vectorindex.Filter{Keywords: map[string][]string{"classes": {"wizard"}}}
		if got, want := ids(search(t, x, e(0), f, 2)), []string{"fireball", "detect-magic"}; !slices.Equal(got, want) {
			t.Errorf("Search(limit 2) = %v, want %v", got, want)
		}
	})
}

// testFiltersNoHolder filters on schema fields and values no point holds:
// never held, and held only by a point since replaced or deleted.
func testFiltersNoHolder(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x,
		vectorindex.Point{ID: "a", Vector: e(0), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"spell"}}}},
		vectorindex.Point{ID: "b", Vector: e(1), Payload: vectorindex.Payload{
			Keywords: map[string][]string{"kind": {"spell"}, "school": {"evocation"}},
			Numbers:  map[string]float64{"level": 3},
			Bools:    map[string]bool{"ritual": true},
		}},
		vectorindex.Point{ID: "c", Vector: e(2), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"spell"}, "school": {"abjuration"}}}},
	)
	if err := x.Delete(t.Context(), []string{"b"}); err != nil {
		t.Fatal(err)
	}
	upsert(t, x, vectorindex.Point{ID: "c", Vector: e(2), Payload: vectorindex.Payload{Keywords: map[string][]string{"kind": {"creature"}}}})
	tests := []struct {
		name string
		f    *vectorindex.Filter
	}{
		{"keyword field never held", &vectorindex.Filter{Keywords: map[string][]string{"classes": {"wizard"}}}},
		{"number field never held", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"challenge_rating": {Max: ptr(30)}}}},
		{"bool field never held", &vectorindex.Filter{Bools: map[string]bool{"concentration": false}}},
		{"keyword of a deleted point", &vectorindex.Filter{Keywords: map[string][]string{"school": {"evocation"}}}},
		{"keyword of a replaced payload", &vectorindex.Filter{Keywords: map[string][]string{"school": {"abjuration"}}}},
		{"number of a deleted point", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(0)}}}},
		{"bool of a deleted point", &vectorindex.Filter{Bools: map[string]bool{"ritual": true}}},
		{"held and never held together", &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}, Ranges: map[string]vectorindex.Range{"challenge_rating": {Min: ptr(0)}}}},
	}
	for _, tc := range tests {
		if got := search(t, x, e(0), tc.f, 5); len(got) != 0 {
			t.Errorf("%s: Search() = %v, want nothing", tc.name, ids(got))
		}
		if got, err := x.IDs(t.Context(), tc.f); err != nil || len(got) != 0 {
			t.Errorf("%s: IDs() = %v, %v, want nothing", tc.name, got, err)
		}
	}
	if got, want := ids(search(t, x, e(0), &vectorindex.Filter{Keywords: map[string][]string{"kind": {"spell"}}}, 5)), []string{"a"}; !slices.Equal(got, want) {
		t.Errorf("Search(kind=spell) = %v, want %v", got, want)
	}
}

func testInvalidFilter(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, spells()...)
	tests := []struct {
		name string
		f    *vectorindex.Filter
	}{
		{"unknown keyword field", &vectorindex.Filter{Keywords: map[string][]string{"colour": {"red"}}}},
		{"range on keyword field", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"school": {Min: ptr(1)}}}},
		{"keyword on number field", &vectorindex.Filter{Keywords: map[string][]string{"level": {"3"}}}},
		{"bool on keyword field", &vectorindex.Filter{Bools: map[string]bool{"kind": true}}},
		{"no values", &vectorindex.Filter{Keywords: map[string][]string{"kind": {}}}},
		{"unbounded range", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {}}}},
		{"NaN bound", &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Min: ptr(math.NaN())}}}},
		{"empty id", &vectorindex.Filter{IDs: []string{"wish", ""}}},
	}
	for _, tc := range tests {
		if _, err := x.Search(t.Context(), e(0), tc.f, 5); !errors.Is(err, vectorindex.ErrInvalidFilter) {
			t.Errorf("%s: err = %v, want ErrInvalidFilter", tc.name, err)
		}
	}
}

func testNotFound(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, vectorindex.Point{ID: "here", Vector: e(0)})
	if got := search(t, x, e(0), &vectorindex.Filter{IDs: []string{"absent"}}, 5); len(got) != 0 {
		t.Errorf("Search(IDs: absent) = %v, want none", got)
	}
	if err := x.Delete(t.Context(), []string{"absent"}); err != nil {
		t.Errorf("Delete(absent) = %v, want nil", err)
	}
	if got := count(t, x); got != 1 {
		t.Errorf("Count() = %d, want 1", got)
	}
}

func randomPoints(r *rand.Rand, prefix string, n, d int) []vectorindex.Point {
	pts := make([]vectorindex.Point, n)
	for i := range pts {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		pts[i] = vectorindex.Point{ID: fmt.Sprintf("%s-%05d", prefix, i), Vector: v,
			Payload: vectorindex.Payload{Numbers: map[string]float64{"level": float64(i % 10)}}}
	}
	return pts
}

func testConcurrent(t *testing.T, h Harness) {
	const d, batches, batch = 32, 20, 50
	x := open(t, h, d)
	r := rand.New(rand.NewPCG(1, 2))
	var all [][]vectorindex.Point
	for b := range batches {
		all = append(all, randomPoints(r, fmt.Sprint("b", b), batch, d))
	}
	queries := randomPoints(r, "q", 8, d)
	ctx := t.Context()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				f := &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Max: ptr(4)}}}
				if i%2 == 0 {
					f = nil
				}
				hits, err := x.Search(ctx, queries[(w+i)%len(queries)].Vector, f, 10)
				if err != nil {
					errs <- fmt.Errorf("search during upsert: %w", err)
					return
				}
				for j := 1; j < len(hits); j++ {
					if hits[j].Score > hits[j-1].Score {
						errs <- fmt.Errorf("hits out of order during upsert: %v", hits)
						return
					}
				}
			}
		})
	}
	for _, b := range all {
		if err := x.Upsert(ctx, b); err != nil {
			t.Errorf("Upsert: %v", err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := count(t, x), batches*batch; got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
	// Every point is findable by its own vector.
	for _, b := range []int{0, batches - 1} {
		p := all[b][7]
		got := search(t, x, p.Vector, nil, 1)
		if len(got) != 1 || got[0].ID != p.ID {
			t.Errorf("Search(own vector of %s) = %v", p.ID, got)
		}
	}
}

func testBulk(t *testing.T, h Harness) {
	const d, n = 64, 3000
	x := open(t, h, d)
	pts := randomPoints(rand.New(rand.NewPCG(3, 4)), "bulk", n, d)
	upsert(t, x, pts...)
	if got := count(t, x); got != n {
		t.Fatalf("Count() = %d, want %d", got, n)
	}
	got, err := x.IDs(t.Context(), nil)
	if err != nil {
		t.Fatalf("IDs: %v", err)
	}
	slices.Sort(got)
	want := make([]string, n)
	for i, p := range pts {
		want[i] = p.ID
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("IDs() returned %d IDs, want all %d points", len(got), n)
	}
	low, err := x.IDs(t.Context(), &vectorindex.Filter{Ranges: map[string]vectorindex.Range{"level": {Max: ptr(0)}}})
	if err != nil {
		t.Fatalf("IDs(level <= 0): %v", err)
	}
	if len(low) != n/10 {
		t.Errorf("IDs(level <= 0) returned %d IDs, want %d", len(low), n/10)
	}
	// Every point is searched: each sampled point is its own nearest
	// neighbour, and the top-5 equals a brute-force reference (these
	// neighbours are further apart than a driver's rounding).
	for _, i := range []int{0, 1234, n - 1} {
		q := pts[i].Vector
		got := search(t, x, q, nil, 5)
		want := reference(pts, q, 5)
		if !slices.Equal(ids(got), want) {
			t.Errorf("Search(point %d) = %v, want %v", i, ids(got), want)
		}
	}
	var cand []string
	for i := 0; i < n; i += 10 {
		cand = append(cand, pts[i].ID)
	}
	q := pts[5].Vector // not a candidate
	hits := search(t, x, q, &vectorindex.Filter{IDs: cand}, 5)
	var sub []vectorindex.Point
	for i := 0; i < n; i += 10 {
		sub = append(sub, pts[i])
	}
	if want := reference(sub, q, 5); !slices.Equal(ids(hits), want) {
		t.Errorf("Search(IDs: %d candidates) = %v, want %v", len(cand), ids(hits), want)
	}
	// A large delete (several driver batches) removes exactly those points.
	var doomed []string
	for i := 0; i < 1000; i++ {
		doomed = append(doomed, pts[i].ID)
	}
	if err := x.Delete(t.Context(), doomed); err != nil {
		t.Fatalf("Delete(1000): %v", err)
	}
	if got := count(t, x); got != n-1000 {
		t.Errorf("Count() after deleting 1000 = %d, want %d", got, n-1000)
	}
	if hits := search(t, x, pts[0].Vector, nil, 1); len(hits) != 1 || hits[0].ID == pts[0].ID {
		t.Errorf("Search(deleted point's vector) = %v, want another point", hits)
	}
}

// reference is a brute-force float64 top-k.
func reference(pts []vectorindex.Point, q []float32, k int) []string {
	type s struct {
		id    string
		score float64
	}
	norm := func(v []float32) float64 {
		var n float64
		for _, c := range v {
			n += float64(c) * float64(c)
		}
		return math.Sqrt(n)
	}
	var all []s
	for _, p := range pts {
		var d float64
		for i := range q {
			d += float64(q[i]) * float64(p.Vector[i])
		}
		all = append(all, s{p.ID, d / norm(q) / norm(p.Vector)})
	}
	slices.SortFunc(all, func(a, b s) int {
		if a.score > b.score {
			return -1
		}
		if a.score < b.score {
			return 1
		}
		return 0
	})
	var out []string
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.id)
	}
	return out
}

func testCanceled(t *testing.T, h Harness) {
	x := open(t, h, dims)
	upsert(t, x, vectorindex.Point{ID: "a", Vector: e(0)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := x.Search(ctx, e(0), nil, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("Search(canceled) = %v, want context.Canceled", err)
	}
	if err := x.Upsert(ctx, []vectorindex.Point{{ID: "b", Vector: e(1)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Upsert(canceled) = %v, want context.Canceled", err)
	}
	if got := count(t, x); got != 1 {
		t.Errorf("Count() = %d, want 1", got)
	}
}

func testClosed(t *testing.T, h Harness) {
	x := open(t, h, dims)
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := x.Search(t.Context(), e(0), nil, 5); !errors.Is(err, vectorindex.ErrClosed) {
		t.Errorf("Search after Close = %v, want ErrClosed", err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

package vectorindex_test

import (
	"context"
	"fmt"

	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
)

func ExampleIndex_Search() {
	ctx := context.Background()
	x, err := embeddedindex.Open(&vectorindex.Options{
		Dimensions: 3,
		Fields: []vectorindex.FieldSchema{
			{Name: "kind", Type: vectorindex.FieldKeyword},
			{Name: "level", Type: vectorindex.FieldNumber},
		},
	})
	if err != nil {
		panic(err)
	}
	defer x.Close()
	spell := func(key string, level float64, v ...float32) vectorindex.Point {
		return vectorindex.Point{ID: key, Vector: v, Payload: vectorindex.Payload{
			Keywords: map[string][]string{"kind": {"spell"}},
			Numbers:  map[string]float64{"level": level},
		}}
	}
	err = x.Upsert(ctx, []vectorindex.Point{
		spell("srd:spell:fireball", 3, 1, 0.1, 0),
		spell("srd:spell:fire-bolt", 0, 0.9, 0.3, 0),
		spell("srd:spell:cure-wounds", 1, 0, 0, 1),
	})
	if err != nil {
		panic(err)
	}
	maxLevel := 2.0
	hits, err := x.Search(ctx, []float32{1, 0, 0}, &vectorindex.Filter{
		Keywords: map[string][]string{"kind": {"spell"}},
		Ranges:   map[string]vectorindex.Range{"level": {Max: &maxLevel}},
	}, 2)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.ID, h.Score)
	}
	// Output:
	// srd:spell:fire-bolt 0.949
	// srd:spell:cure-wounds 0.000
}

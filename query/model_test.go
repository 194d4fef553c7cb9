package query_test

import (
	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnx"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// Only these tests link the model (cgo); the query package itself never
// imports it.

func embedderText(e *lkv1.Entity, lower bool) string { return embedder.Text(e, lower) }

// testModel opens the real embedding model that `make model` installs
// (LOREKEEPER_MODEL_DIR, default <repo>/.models).
func testModel() (query.Embedder, badgerstore.ModelInfo, error) {
	m, err := onnx.Open(modeltest.Dir(), nil)
	if err != nil {
		return nil, badgerstore.ModelInfo{}, err
	}
	return m, m.Info(), nil
}

package embeddedindex_test

import (
	"context"
	"testing"

	"lorekeeper.dev/embedder/vectorindex/driver"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/embedder/vectorindex/vectorindextest"
)

type harness struct{}

func (harness) MakeDriver(_ context.Context, dims int, _ []driver.FieldSchema) (driver.Index, error) {
	return embeddedindex.New(dims), nil
}

func (harness) Close() {}

func TestConformance(t *testing.T) {
	vectorindextest.RunConformanceTests(t, func(context.Context, *testing.T) (vectorindextest.Harness, error) {
		return harness{}, nil
	})
}

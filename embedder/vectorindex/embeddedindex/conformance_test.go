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

// searchOnly hides the driver's Scorer capability, so that the portable
// index answers Scores through Search, as it does for Qdrant.
type searchOnly struct{ driver.Index }

type searchOnlyHarness struct{}

func (searchOnlyHarness) MakeDriver(_ context.Context, dims int, _ []driver.FieldSchema) (driver.Index, error) {
	return searchOnly{embeddedindex.New(dims)}, nil
}

func (searchOnlyHarness) Close() {}

func TestConformance_WithoutScorer(t *testing.T) {
	vectorindextest.RunConformanceTests(t, func(context.Context, *testing.T) (vectorindextest.Harness, error) {
		return searchOnlyHarness{}, nil
	})
}

package query_test

import (
	"context"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestSearch_TotalEveryPage: a search's total is every result of every
// kind over all its pages, and every page says the same.
func TestSearch_TotalEveryPage(t *testing.T) {
	cl := client(t)
	ctx := context.Background()
	req := &lkv1.SearchRequest{Query: "dragon", Limit: 10}
	var totals []uint64
	seen, pages := 0, 0
	for cursor := ""; pages == 0 || cursor != ""; pages++ {
		if pages == 100 {
			t.Fatal("over 100 pages")
		}
		req.Cursor = cursor
		resp, err := cl.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		totals = append(totals, resp.GetTotal())
		for _, g := range resp.GetGroups() {
			seen += len(g.GetResults())
		}
		cursor = resp.GetNextCursor()
	}
	if pages < 3 {
		t.Fatalf("%d pages: want several to compare", pages)
	}
	for i, n := range totals {
		if n != uint64(seen) {
			t.Errorf("page %d of %d: total %d; %d results over all pages", i+1, pages, n, seen)
		}
	}
}

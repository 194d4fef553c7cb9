package query

import (
	"context"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// ToStatus exposes toStatus to the black-box tests.
var ToStatus = toStatus

// DecodeCursor and EncodeNameCursor expose the cursor codec to the fuzz test.
var DecodeCursor = func(s, query string) (name, key, snapshot string, offset int, err error) {
	c, err := decodeCursor(s, query)
	if err != nil || c == nil {
		return "", "", "", 0, err
	}
	return c.Name, c.Key, c.Snapshot, c.Offset, nil
}

// EncodeNameCursor makes a name-order cursor, as a page does.
func EncodeNameCursor(query, name, key string) string {
	return (&cursor{Query: query, Name: name, Key: key}).encode()
}

// NameContains exposes nameContains to the black-box tests.
var NameContains = nameContains

// MaxSnapshots is how many ranked snapshots are kept at most.
const MaxSnapshots = maxSnapshots

// MaxCursorOffset is the highest offset a cursor may carry.
const MaxCursorOffset = maxCursorOffset

// PageOfThree pages a snapshot group of three keys from offset, without a
// view: only offsets outside the list may reach it.
func PageOfThree(offset, limit int) (items int, more bool) {
	g := snapGroup{total: 3, order: make([]scored, 3)}
	got, more := g.page(nil, offset, limit, badgerstore.Set{})
	return len(got), more
}

// BM25Text is what a lookup over kinds ranks by BM25 of the question q.
func BM25Text(s *Service, q string, kinds ...lkv1.Kind) (string, error) {
	var out string
	err := s.store.View(context.Background(), func(v *badgerstore.View) error {
		out = s.understand(v, q, kinds).bm25(q)
		return nil
	})
	return out, err
}

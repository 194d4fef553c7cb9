package query_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// FuzzCursor: whatever a client sends as a cursor is decoded or refused
// with ErrInvalidArgument, never a panic; a cursor the service made comes
// back as it was, and only for its own request.
func FuzzCursor(f *testing.F) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{"", "abc", "e30", "eyJ2IjoxLCJxIjoiaCJ9", "!!!", query.EncodeNameCursor("h", "fireball", "k"),
		// The shapes this service makes (ranked, name order, documents),
		// and the forged one, for the request "h".
		b64(`{"v":1,"q":"h","s":"q2T7n0xJ3mVbA1cd","o":5}`),
		b64(`{"v":1,"q":"h","n":"fireball","r":2,"k":"open5e_v2:srd-2014:spell:fireball"}`),
		b64(`{"v":1,"q":"h","k":"srd-2014","src":"open5e_v2"}`),
		b64(`{"v":1,"q":"h","s":"x","o":-1}`),
		b64(`{"v":1,"q":"h","s":"q2T7n0xJ3mVbA1cd","o":9223372036854775807}`),
	} {
		f.Add(s, "fireball", "open5e_v2:srd-2014:spell:fireball")
	}
	f.Fuzz(func(t *testing.T, raw, name, key string) {
		_, _, snap, off, err := query.DecodeCursor(raw, "h")
		if err != nil && !errors.Is(err, query.ErrInvalidArgument) {
			t.Errorf("DecodeCursor(%q): %v, want nil or ErrInvalidArgument", raw, err)
		}
		if err == nil && (off < 0 || off > query.MaxCursorOffset || (snap == "" && off != 0)) {
			t.Errorf("DecodeCursor(%q) accepted offset %d (snapshot %q)", raw, off, snap)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(key) {
			return // proto3 strings, as entity names and keys are, are valid UTF-8
		}
		if len(key) > 65000 || len(name) > 256<<10 {
			return // past Badger's key bound, and far past any name
		}
		c := query.EncodeNameCursor("h", name, key)
		gotName, gotKey, snap, off, err := query.DecodeCursor(c, "h")
		if err != nil || gotName != name || gotKey != key || snap != "" || off != 0 {
			t.Errorf("round trip of (%q, %q): (%q, %q, %q, %d), %v", name, key, gotName, gotKey, snap, off, err)
		}
		if _, _, _, _, err := query.DecodeCursor(c, "other"); !errors.Is(err, query.ErrInvalidArgument) {
			t.Errorf("a cursor for another request: %v, want ErrInvalidArgument", err)
		}
	})
}

// forge rewrites a cursor's JSON fields: what a client can do, since the
// request hash it carries is computable by anyone.
func forge(t *testing.T, cursor string, set map[string]any) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatalf("decoding cursor %q: %v", cursor, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ = json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestPages_ForgedCursor: a cursor rewritten by hand, with the request
// hash kept (the cursor: offset -1 and snapshot "x"), is refused as
// invalid and the server goes on serving; an offset in range but past the
// end of the list is an empty last page.
func TestPages_ForgedCursor(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	lookup := &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "fire", Limit: 5}}
	search := &lkv1.SearchRequest{Query: "fire", Limit: 5}
	first, err := c.LookupSpells(ctx, lookup)
	if err != nil || first.GetNextCursor() == "" {
		t.Fatalf("ranked first page: %v, cursor %q", err, first.GetNextCursor())
	}
	sfirst, err := c.Search(ctx, search)
	if err != nil || sfirst.GetNextCursor() == "" {
		t.Fatalf("search first page: %v, cursor %q", err, sfirst.GetNextCursor())
	}
	named, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 5}})
	if err != nil || named.GetNextCursor() == "" {
		t.Fatalf("name-order first page: %v, cursor %q", err, named.GetNextCursor())
	}
	callLookup := func(cur string) error {
		r := proto.Clone(lookup).(*lkv1.LookupSpellsRequest)
		r.Common.Cursor = cur
		_, err := c.LookupSpells(ctx, r)
		return err
	}
	callSearch := func(cur string) error {
		r := proto.Clone(search).(*lkv1.SearchRequest)
		r.Cursor = cur
		_, err := c.Search(ctx, r)
		return err
	}
	callNamed := func(cur string) error {
		_, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 5, Cursor: cur}})
		return err
	}
	for _, tc := range []struct {
		name string
		call func(string) error
		cur  string
	}{
		{"issue's cursor: offset -1, snapshot x", callLookup, forge(t, first.GetNextCursor(), map[string]any{"s": "x", "o": -1})},
		{"offset -1", callLookup, forge(t, first.GetNextCursor(), map[string]any{"o": -1})},
		{"offset max int64", callLookup, forge(t, first.GetNextCursor(), map[string]any{"o": int64(math.MaxInt64)})},
		{"offset beyond int64", callLookup, forge(t, first.GetNextCursor(), map[string]any{"o": 1e30})},
		{"offset near max int", callSearch, forge(t, sfirst.GetNextCursor(), map[string]any{"o": int64(math.MaxInt64 - 2)})},
		{"search offset -1", callSearch, forge(t, sfirst.GetNextCursor(), map[string]any{"o": -1})},
		{"search without snapshot", callSearch, forge(t, sfirst.GetNextCursor(), map[string]any{"s": nil})},
		{"snapshot id too long", callSearch, forge(t, sfirst.GetNextCursor(), map[string]any{"s": strings.Repeat("A", 2000)})},
		{"snapshot and position", callLookup, forge(t, first.GetNextCursor(), map[string]any{"n": "fireball"})},
		{"position with offset", callNamed, forge(t, named.GetNextCursor(), map[string]any{"o": 3})},
		{"document rank min int64", callNamed, forge(t, named.GetNextCursor(), map[string]any{"r": int64(math.MinInt64)})},
		{"document rank -1", callNamed, forge(t, named.GetNextCursor(), map[string]any{"r": -1})},
		{"version 2", callNamed, forge(t, named.GetNextCursor(), map[string]any{"v": 2})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.cur)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "cursor") {
				t.Errorf("err = %v, want InvalidArgument about the cursor", err)
			}
		})
	}
	// In range but past the end: an empty last page, no next cursor.
	for name, call := range map[string]func() (int, string, error){
		"lookup": func() (int, string, error) {
			r := proto.Clone(lookup).(*lkv1.LookupSpellsRequest)
			r.Common.Cursor = forge(t, first.GetNextCursor(), map[string]any{"o": 1 << 30})
			resp, err := c.LookupSpells(ctx, r)
			return len(resp.GetResults()), resp.GetNextCursor(), err
		},
		"search": func() (int, string, error) {
			r := proto.Clone(search).(*lkv1.SearchRequest)
			r.Cursor = forge(t, sfirst.GetNextCursor(), map[string]any{"o": 1 << 30})
			resp, err := c.Search(ctx, r)
			return len(resp.GetGroups()), resp.GetNextCursor(), err
		},
	} {
		if n, next, err := call(); err != nil || n != 0 || next != "" {
			t.Errorf("%s past the end: %d results, next %q, %v; want an empty last page", name, n, next, err)
		}
	}
	// The service still serves, and the real cursors still work.
	if err := callLookup(first.GetNextCursor()); err != nil {
		t.Errorf("the real ranked cursor after the forged ones: %v", err)
	}
	if err := callSearch(sfirst.GetNextCursor()); err != nil {
		t.Errorf("the real search cursor after the forged ones: %v", err)
	}
	if err := callNamed(named.GetNextCursor()); err != nil {
		t.Errorf("the real name-order cursor after the forged ones: %v", err)
	}
}

// TestSnapGroupPage: whatever offset reaches a page (a cursor is checked
// before, this is the second line), it is a page of the list or an empty
// last one, never an index out of range or a next page that overflows.
func TestSnapGroupPage(t *testing.T) {
	for _, tc := range []struct {
		name          string
		offset, limit int
	}{
		{"negative", -1, 5},
		{"past the end", 3, 5},
		{"max int", math.MaxInt, 5},
		{"offset plus limit overflows", math.MaxInt - 2, 10},
		{"no limit", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, more := query.PageOfThree(tc.offset, tc.limit)
			if n != 0 || more {
				t.Errorf("page(%d, %d) of 3 keys: %d items, more %v; want none and no more", tc.offset, tc.limit, n, more)
			}
		})
	}
}

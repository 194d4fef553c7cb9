package query_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"lorekeeper.dev/query"
)

// FuzzCursor: whatever a client sends as a cursor is decoded or refused
// with ErrInvalidArgument, never a panic; a cursor the service made comes
// back as it was, and only for its own request.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "abc", "e30", "eyJ2IjoxLCJxIjoiaCJ9", "!!!", query.EncodeNameCursor("h", "fireball", "k")} {
		f.Add(s, "fireball", "open5e_v2:srd-2014:spell:fireball")
	}
	f.Fuzz(func(t *testing.T, raw, name, key string) {
		if _, _, _, _, err := query.DecodeCursor(raw, "h"); err != nil && !errors.Is(err, query.ErrInvalidArgument) {
			t.Errorf("DecodeCursor(%q): %v, want nil or ErrInvalidArgument", raw, err)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(key) {
			return // proto3 strings, as entity names and keys are, are valid UTF-8
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

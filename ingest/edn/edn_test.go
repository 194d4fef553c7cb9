package edn_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/edn"
)

func mustParse(t *testing.T, src string, opts *edn.Options) *edn.Result {
	t.Helper()
	res, err := edn.Parse([]byte(src), opts)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return res
}

func TestParse_Values(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // edn.String of the value
	}{
		{"map", `{:a 1, :b "x"}`, `{:a 1, :b "x"}`},
		{"bom", "\xef\xbb\xbf{:a 1}", `{:a 1}`},
		{"namespaced map", `#:orcpub.dnd.e5{:spells {:x 1} :feats {}}`, `{:orcpub.dnd.e5/feats {}, :orcpub.dnd.e5/spells {:x 1}}`},
		{"namespaced map keeps qualified and _ keys", `#:a{:b 1 :c/d 2 :_/e 3}`, `{:a/b 1, :c/d 2, :e 3}`},
		{"namespaced map values untouched", `#:a{:b :c, :d [:e]}`, `{:a/b :c, :a/d [:e]}`},
		{"namespaced map only its own level", `#:a{:b {:c 1}}`, `{:a/b {:c 1}}`},
		{"namespaced map with discard", `#:a{#_ :x :b :c #_ :d}`, `{:a/b :c}`},
		{"namespaced map inside wrapper", `{"Book" #:orcpub.dnd.e5{:feats {:f {:name "F"}}}}`, `{"Book" {:orcpub.dnd.e5/feats {:f {:name "F"}}}}`},
		{"bare keyword", `{: 1, :a :}`, `{: 1, :a :}`},
		{"nil key", `{nil nil :a 1}`, `{:a 1, nil nil}`},
		{"set sorted", `#{:c :a :b}`, `#{:a :b :c}`},
		{"list", `(1 2)`, `[1 2]`},
		{"vector key", `{[1 2] :v}`, `{[1 2] :v}`},
		{"digit keyword", `{:9-lives 1}`, `{:9-lives 1}`},
		{"comments", ";; c\n{:a ; inline\n 1}", `{:a 1}`},
		{"discard at top", `#_ {:x 1} {:a 1}`, `{:a 1}`},
		{"char", `[\a \newline]`, `[\a \` + "\n" + `]`},
		{"string with escapes", `"a\"b\\"`, `"a\"b\\"`},
		{"float", `0.125`, `0.125`},
		{"tag", `#my/tag 1`, `#my/tag 1`},
		{"non-ascii string", `"em — dash"`, `"em — dash"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustParse(t, tt.src, nil)
			if got := edn.String(res.Value); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("got warnings %v, want none", res.Warnings)
			}
		})
	}
}

func TestParse_Trailing(t *testing.T) {
	res := mustParse(t, "{:a 1}\n;; fine\n{:b 2} junk", nil)
	if got, want := edn.String(res.Value), `{:a 1}`; got != want {
		t.Errorf("value: got %s, want %s", got, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Msg, "trailing data") {
		t.Fatalf("warnings: got %v, want one about trailing data", res.Warnings)
	}
	if got, want := res.Warnings[0].Line, 3; got != want {
		t.Errorf("warning line: got %d, want %d", got, want)
	}
	// Whitespace and comments after the value are not worth a warning.
	if res := mustParse(t, "{:a 1}\n ;; end\n", nil); len(res.Warnings) != 0 {
		t.Errorf("got warnings %v for a trailing comment, want none", res.Warnings)
	}
}

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		opts       *edn.Options
		wantMsg    string
		wantOffset int64
	}{
		{"empty", "  ;; nothing\n", nil, "no EDN value", 13},
		{"unclosed map", `{:a {:b 1}`, nil, "map opened at line 1, column 1 is not closed", 10},
		{"unclosed string", "{:a \"abc", nil, "inside the string that starts at line 1, column 5", 8},
		{"mismatched", `{:a [1}`, nil, `unexpected '}': vector opened`, 6},
		{"stray close", `]`, nil, "no collection open", 0},
		{"odd map", `{:a 1 :b}`, nil, "has a key with no value", 8},
		{"invalid utf8", "{:a \"x\xc3\x28\"}", nil, "invalid UTF-8 byte 0xC3", 6},
		{"invalid utf8 in comment", ";\xff\n{}", nil, "invalid UTF-8 byte 0xFF", 1},
		{"utf16", "\xff\xfe{\x00", nil, "UTF-16", 0},
		{"depth", strings.Repeat("[", 5) + strings.Repeat("]", 5), &edn.Options{MaxDepth: 4}, "nesting deeper than the limit of 4", 4},
		{"string length", `{:a "` + strings.Repeat("x", 100) + `"}`, &edn.Options{MaxStringLen: 50}, "string longer than the limit of 50 bytes", 4},
		{"auto-resolved ns map", `#::{:a 1}`, nil, "auto-resolved namespaced map", 0},
		{"ns map without brace", `#:a [1]`, nil, "not followed by {", 0},
		{"offset counts the BOM", "\xef\xbb\xbf{", nil, "not closed", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := edn.Parse([]byte(tt.src), tt.opts)
			var se *edn.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got error %v, want a *edn.SyntaxError", err)
			}
			if !strings.Contains(se.Msg, tt.wantMsg) {
				t.Errorf("got %q, want it to contain %q", se.Msg, tt.wantMsg)
			}
			if se.Offset != tt.wantOffset {
				t.Errorf("offset: got %d, want %d (%v)", se.Offset, tt.wantOffset, err)
			}
		})
	}
}

func TestParse_DecoderErrors(t *testing.T) {
	// Structurally sound input that olympos rejects still fails cleanly.
	for _, src := range []string{`{:a 1/8}`, `{:a ^:m {}}`, `#inst "not a time"`, `{:a 99999999999999999999}`} {
		if _, err := edn.Parse([]byte(src), nil); err == nil {
			t.Errorf("Parse(%q): got no error, want one", src)
		}
	}
}

func TestParse_RepairUTF8(t *testing.T) {
	src := "{:a \"x\xc3\x28y\" :b \"ok \xe2\x80\x94\"}"
	res := mustParse(t, src, &edn.Options{RepairUTF8: true})
	m := res.Value.(edn.Map)
	if got, want := m[edn.Keyword("a")], "x\uFFFD(y"; got != want {
		t.Errorf(":a: got %q, want %q", got, want)
	}
	if got, want := m[edn.Keyword("b")], "ok —"; got != want {
		t.Errorf(":b: got %q, want %q", got, want)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Offset != 6 {
		t.Errorf("warnings: got %v, want one at offset 6", res.Warnings)
	}
	// Invalid bytes in a keyword are an error even in repair mode: olympos
	// would not read a keyword with U+FFFD in it. (Fuzzing found that the
	// namespace rewrite and a repair used to overlap here.)
	_, err := edn.Parse([]byte("#:ns{:k\xff 1}"), &edn.Options{RepairUTF8: true})
	var se *edn.SyntaxError
	if !errors.As(err, &se) || se.Offset != 7 || !strings.Contains(se.Msg, "invalid UTF-8 byte 0xFF outside a string") {
		t.Errorf("keyword with a bad byte: got %v, want a syntax error at offset 7", err)
	}
}

func TestParse_MaxSize(t *testing.T) {
	_, err := edn.Parse([]byte(`{:a "0123456789"}`), &edn.Options{MaxSize: 10})
	if !errors.Is(err, edn.ErrTooLarge) {
		t.Errorf("Parse: got %v, want ErrTooLarge", err)
	}
	_, err = edn.Read(bytes.NewReader(make([]byte, 100)), &edn.Options{MaxSize: 99})
	if !errors.Is(err, edn.ErrTooLarge) {
		t.Errorf("Read: got %v, want ErrTooLarge", err)
	}
}

func TestParse_ManyWarningsAreBounded(t *testing.T) {
	src := `"` + strings.Repeat("\xff", 10000) + `"`
	res := mustParse(t, src, &edn.Options{RepairUTF8: true})
	if got := len(res.Warnings); got > 51 {
		t.Errorf("got %d warnings, want at most 51", got)
	}
	if got, want := res.Value.(string), strings.Repeat("\uFFFD", 10000); got != want {
		t.Errorf("value not fully repaired")
	}
}

// TestParse_Samples parses every sample the data pack ships.
func TestParse_Samples(t *testing.T) {
	tests := []struct {
		file    string
		wantErr string // "" for success
	}{
		{"orcbrew/jnwhiteh-orcbrew-utils_example.orcbrew", ""},
		{"orcbrew/lorekeeper-mcp_sample.orcbrew", ""},
		{"orcbrew/orcpub-dmv_coverage-pak.orcbrew", ""},
		{"orcbrew/orcpub-dmv_cruft-shapes.orcbrew", ""},
		{"orcbrew/orcpub-dmv_demo-content.orcbrew", ""},
		{"orcbrew/orcpub-dmv_extensibility-fixtures.orcbrew", ""},
		{"orcbrew-bad/crafted_truncated.orcbrew", "inside the string that starts at line 9"},
		{"orcbrew-bad/orcpub-dmv_broken-parse.orcbrew", "map opened at line 1, column 34 is not closed (3 collections open)"},
		{"orcbrew-bad/crafted_invalid-utf8.orcbrew", "invalid UTF-8 byte 0xC3"},
		{"orcbrew-bad/crafted_wrong-top-level-vector.orcbrew", ""},
		{"orcbrew-bad/crafted_unknown-entity-kinds.orcbrew", ""},
		{"orcbrew-bad/crafted_missing-name.orcbrew", ""},
		{"orcbrew-bad/orcpub-dmv_broken-content.orcbrew", ""},
		{"orcbrew-bad/orcpub-dmv_keyword-trap.orcbrew", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := edn.Parse(data, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				if res.Value == nil {
					t.Fatal("got a nil value")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParse_NamespacedSample(t *testing.T) {
	data, err := os.ReadFile("testdata/orcbrew/orcpub-dmv_demo-content.orcbrew")
	if err != nil {
		t.Fatal(err)
	}
	res, err := edn.Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	book, ok := res.Value.(edn.Map)["Demo Content"].(edn.Map)
	if !ok {
		t.Fatalf("no map under \"Demo Content\": %s", edn.String(res.Value))
	}
	for _, k := range []string{"orcpub.dnd.e5/feats", "orcpub.dnd.e5/backgrounds", "orcpub.dnd.e5/spells"} {
		if _, ok := book[edn.Keyword(k)].(edn.Map); !ok {
			t.Errorf("no map under :%s", k)
		}
	}
}

func TestToJSON(t *testing.T) {
	res := mustParse(t, `{:name "X" :school :evocation :lists #{:b :a} nil nil 1 [2.5 \c] :n 7N}`, nil)
	got, err := edn.ToJSON(res.Value)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"1":[2.5,"c"],"lists":["a","b"],"n":7,"name":"X","nil":null,"school":"evocation"}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

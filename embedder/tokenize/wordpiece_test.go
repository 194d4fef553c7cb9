package tokenize_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/tokenize"
)

// golden holds the ids the official tokenizer (Hugging Face tokenizers, the
// Rust library, through its npm binding 0.23.2) gives for all-MiniLM-L6-v2's
// tokenizer.json; see testdata/minilm/README.md.
type golden struct {
	Text   string   `json:"text"`
	IDs    []int64  `json:"ids"`
	Tokens []string `json:"tokens"`
}

func loadWordPiece(t testing.TB, opts *tokenize.WordPieceOptions) *tokenize.WordPiece {
	t.Helper()
	tok, err := tokenize.LoadWordPiece("testdata/minilm/vocab.txt", opts)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestWordPiece_Encode_official(t *testing.T) {
	tok := loadWordPiece(t, nil)
	b, err := os.ReadFile("testdata/minilm/wordpiece_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v (%s)", c.Text, got, c.IDs, strings.Join(c.Tokens, " "))
		}
	}
}

func TestWordPiece_Encode_known(t *testing.T) {
	tok := loadWordPiece(t, nil)
	tests := []struct {
		text string
		want []int64
	}{
		// bert-base-uncased's ids, which all-MiniLM-L6-v2 shares, from the
		// tests of github.com/daulet/tokenizers.
		{"brown fox jumps over the lazy dog", []int64{101, 2829, 4419, 14523, 2058, 1996, 13971, 3899, 102}},
		{"this short sentence", []int64{101, 0x7e7, 0x99c, 0x186b, 102}},
		{"", []int64{101, 102}},
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestWordPiece_Encode_truncates(t *testing.T) {
	tok := loadWordPiece(t, &tokenize.WordPieceOptions{MaxTokens: 5})
	got := tok.Encode("brown fox jumps over the lazy dog")
	want := []int64{101, 2829, 4419, 14523, 102}
	if !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}

func TestNewWordPiece_errors(t *testing.T) {
	if _, err := tokenize.NewWordPiece([]byte("a\nb\n"), nil); err == nil {
		t.Error("vocabulary without [UNK], [CLS], [SEP]: no error")
	}
	if _, err := tokenize.NewWordPiece([]byte("[UNK]\n[CLS]\n[SEP]\n"), &tokenize.WordPieceOptions{MaxTokens: 1}); err == nil {
		t.Error("MaxTokens 1: no error")
	}
}

func FuzzWordPiece_Encode(f *testing.F) {
	tok := loadWordPiece(f, &tokenize.WordPieceOptions{MaxTokens: 64})
	for _, s := range []string{"Fire Shield", "naïve café", "[SEP]x[CLS]", "日本語🔥"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if len(ids) < 2 || len(ids) > 64 || ids[0] != 101 || ids[len(ids)-1] != 102 {
			t.Fatalf("Encode(%q) = %v", s, ids)
		}
	})
}

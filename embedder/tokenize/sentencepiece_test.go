package tokenize_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/tokenize"
)

type useReference struct {
	Texts      []string    `json:"texts"`
	IDs        [][]int64   `json:"ids"`
	Embeddings [][]float64 `json:"embeddings"`
}

func loadUSEReference(t *testing.T) useReference {
	t.Helper()
	b, err := os.ReadFile("testdata/use/use_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref useReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Texts) == 0 || len(ref.Texts) != len(ref.IDs) {
		t.Fatalf("reference has %d texts and %d id lists", len(ref.Texts), len(ref.IDs))
	}
	return ref
}

func TestSentencePiece_Encode(t *testing.T) {
	tok, err := tokenize.LoadSentencePiece("testdata/use/vocab.json")
	if err != nil {
		t.Fatal(err)
	}
	ref := loadUSEReference(t)
	for i, text := range ref.Texts {
		got := tok.Encode(text)
		if want := ref.IDs[i]; !slices.Equal(got, want) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", text, got, want)
		}
	}
}

// TestSentencePiece_Encode_tfjs compares with the TF.js tokenizer's own ids
// for hundreds of texts, random ones included (testdata/use/README.md).
func TestSentencePiece_Encode_tfjs(t *testing.T) {
	tok, err := tokenize.LoadSentencePiece("testdata/use/vocab.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/use/tokenizer_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string  `json:"text"`
		IDs  []int64 `json:"ids"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 300 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

func TestSentencePiece_Encode_cases(t *testing.T) {
	tok, err := tokenize.LoadSentencePiece("testdata/use/vocab.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       []int64
	}{
		{"empty", "", []int64{}},
		// NFKC folds the full-width letters to ASCII before segmenting.
		{"nfkc", "ｆｉｒｅ damage", tok.Encode("fire damage")},
		// A run of characters no piece covers is a single unknown id.
		{"unknown run merges", "日本語", []int64{30, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tok.Encode(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestNewSentencePiece_errors(t *testing.T) {
	for _, in := range []string{"", "{}", `[["a", 0]]`, `[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],[1,"x"]]`} {
		if _, err := tokenize.NewSentencePiece([]byte(in)); err == nil {
			t.Errorf("NewSentencePiece(%q): no error", in)
		}
	}
}

func FuzzSentencePiece_Encode(f *testing.F) {
	tok, err := tokenize.LoadSentencePiece("testdata/use/vocab.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"Fire Shield", "Ünïcödé — naïve", "\t\n", "🔥🔥x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.Encode(s) {
			if id < 0 || int(id) >= tok.VocabSize() || (id > 0 && id < 6) {
				t.Fatalf("Encode(%q) produced id %d", s, id)
			}
		}
	})
}

package tokenize_test

import (
	"strings"
	"testing"

	"lorekeeper.dev/embedder/tokenize"
)

// A ~100-word rules text, the size of a typical entity description.
var hundredWords = strings.Repeat("A bright streak flashes from your pointing finger to a point you choose within range and then blossoms with a low roar into an explosion of flame. ", 4) // 108 words

func BenchmarkSentencePiece_Encode(b *testing.B) {
	tok, err := tokenize.LoadSentencePiece("testdata/use/vocab.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(hundredWords)))
	for b.Loop() {
		tok.Encode(hundredWords)
	}
}

func BenchmarkWordPiece_Encode(b *testing.B) {
	tok := loadWordPiece(b, nil)
	b.SetBytes(int64(len(hundredWords)))
	for b.Loop() {
		tok.Encode(hundredWords)
	}
}

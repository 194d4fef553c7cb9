package tokenize

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// wordSeparator is SentencePiece's visible space, U+2581.
const wordSeparator = "\u2581"

// reservedPieces is how many leading vocabulary entries (unknown, <s>,
// </s>, extra ids) never match text.
const reservedPieces = 6

// SentencePiece segments text the way the TF.js Universal Sentence Encoder's
// tokenizer does: NFKC, a word separator before the text and instead of
// every space, then the best-scoring segmentation over the vocabulary's
// piece scores; characters no piece covers become id 0, and runs of them
// merge into one. Its ids are exactly those the TF.js model was trained
// with, including that implementation's tie-breaking, so it is a port of
// that code rather than a general SentencePiece.
type SentencePiece struct {
	pieces []spPiece
	root   *trieNode
}

type spPiece struct {
	text  string
	score float64
	// utf16Len is the piece's length in UTF-16 code units: the reference
	// implementation steps back by JavaScript's string length when it
	// traces the best path, and only that reproduces its ids exactly.
	utf16Len int
}

type trieNode struct {
	children map[rune]*trieNode
	end      bool
	index    int
	score    float64
	length   int // in runes
}

// NewSentencePiece builds a tokenizer from the model's vocab.json: a JSON
// array of [piece, score] pairs in id order.
func NewSentencePiece(vocabJSON []byte) (*SentencePiece, error) {
	var raw [][2]any
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("parse sentencepiece vocabulary: %w", err)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("parse sentencepiece vocabulary: %d entries", len(raw))
	}
	t := &SentencePiece{pieces: make([]spPiece, len(raw)), root: &trieNode{}}
	for i, entry := range raw {
		text, ok1 := entry[0].(string)
		// A few pieces (those with ':') have a null score; JavaScript adds
		// null as 0, so they score 0 here too.
		score, ok2 := entry[1].(float64)
		if entry[1] == nil {
			ok2 = true
		}
		if !ok1 || !ok2 || text == "" {
			return nil, fmt.Errorf("parse sentencepiece vocabulary: entry %d is not [piece, score]", i)
		}
		t.pieces[i] = spPiece{text: text, score: score, utf16Len: len(utf16.Encode([]rune(text)))}
		if i >= reservedPieces {
			t.insert(text, score, i)
		}
	}
	return t, nil
}

// LoadSentencePiece reads vocab.json from path.
func LoadSentencePiece(path string) (*SentencePiece, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load sentencepiece vocabulary: %w", err)
	}
	return NewSentencePiece(b)
}

// VocabSize is the number of ids, reserved ones included.
func (t *SentencePiece) VocabSize() int { return len(t.pieces) }

// Piece returns the vocabulary entry of id.
func (t *SentencePiece) Piece(id int) string { return t.pieces[id].text }

func (t *SentencePiece) insert(piece string, score float64, index int) {
	n := t.root
	runes := []rune(piece)
	for _, r := range runes {
		child := n.children[r]
		if child == nil {
			if n.children == nil {
				n.children = make(map[rune]*trieNode)
			}
			child = &trieNode{}
			n.children[r] = child
		}
		n = child
	}
	n.end, n.score, n.index, n.length = true, score, index, len(runes)
}

// Encode returns the ids of text, without truncation.
func (t *SentencePiece) Encode(text string) []int64 {
	text = norm.NFKC.String(text)
	if text == "" {
		return []int64{}
	}
	symbols := []rune(wordSeparator + strings.ReplaceAll(text, " ", wordSeparator))
	n := len(symbols)

	// Viterbi over the lattice of pieces, relaxed forwards: scores[i] is
	// final once every piece ending at i has been seen, and pieces reaching
	// a given end arrive in increasing order of start, the order the
	// reference visits them in. Its rule: an end whose best score is still
	// exactly 0 takes any candidate, and later candidates win ties. A
	// position no piece starts at is an unknown of score 0.
	scores := make([]float64, n+1)
	best := make([]int, n+1)
	relax := func(start, end, index int, score float64) {
		if s := score + scores[start]; scores[end] == 0 || s >= scores[end] {
			scores[end], best[end] = s, index
		}
	}
	for i := range n {
		found := false
		node := t.root.children[symbols[i]]
		for j := i; node != nil; {
			if node.end {
				relax(i, i+node.length, node.index, node.score)
				found = true
			}
			if j++; j >= n {
				break
			}
			node = node.children[symbols[j]]
		}
		if !found {
			relax(i, i+1, 0, 0)
		}
	}

	var ids []int64
	prevUnknown := false
	for at := n; at > 0; at -= t.pieces[best[at]].utf16Len {
		id := best[at]
		if !(prevUnknown && id == 0) {
			ids = append(ids, int64(id))
		}
		prevUnknown = id == 0
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}

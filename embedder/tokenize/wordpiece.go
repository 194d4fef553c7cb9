package tokenize

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// WordPieceOptions may be nil; zero fields take the defaults.
type WordPieceOptions struct {
	// MaxTokens bounds the encoding, [CLS] and [SEP] included (default 256,
	// all-MiniLM-L6-v2's limit); longer texts lose their tail.
	MaxTokens int
}

// maxWordRunes: longer words become [UNK] whole, as in BERT.
const maxWordRunes = 100

// specialTokens are matched in the raw text before normalisation, as the
// reference tokenizer's added tokens are.
var specialTokens = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// WordPiece is BERT's uncased tokenizer as all-MiniLM-L6-v2's tokenizer.json
// configures it: clean the text (drop control characters, map whitespace to
// spaces), space out CJK ideographs, strip accents, lower-case, split on
// whitespace and punctuation, then greedy longest-match WordPiece with "##"
// continuations, wrapped in [CLS] … [SEP].
type WordPiece struct {
	vocab     map[string]int64
	unk       int64
	cls, sep  int64
	maxTokens int
}

// NewWordPiece builds a tokenizer from a vocab.txt (one token per line, in
// id order).
func NewWordPiece(vocabTxt []byte, opts *WordPieceOptions) (*WordPiece, error) {
	if opts == nil {
		opts = &WordPieceOptions{}
	}
	t := &WordPiece{vocab: make(map[string]int64), maxTokens: opts.MaxTokens}
	if t.maxTokens <= 0 {
		t.maxTokens = 256
	}
	if t.maxTokens < 2 {
		return nil, fmt.Errorf("wordpiece: MaxTokens %d leaves no room for [CLS] and [SEP]", t.maxTokens)
	}
	sc := bufio.NewScanner(bytes.NewReader(vocabTxt))
	for id := int64(0); sc.Scan(); id++ {
		tok := strings.TrimRight(sc.Text(), "\r")
		if _, dup := t.vocab[tok]; !dup {
			t.vocab[tok] = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse wordpiece vocabulary: %w", err)
	}
	for _, s := range []struct {
		tok string
		id  *int64
	}{{"[UNK]", &t.unk}, {"[CLS]", &t.cls}, {"[SEP]", &t.sep}} {
		id, ok := t.vocab[s.tok]
		if !ok {
			return nil, fmt.Errorf("parse wordpiece vocabulary: no %s token", s.tok)
		}
		*s.id = id
	}
	return t, nil
}

// LoadWordPiece reads vocab.txt from path.
func LoadWordPiece(path string, opts *WordPieceOptions) (*WordPiece, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load wordpiece vocabulary: %w", err)
	}
	return NewWordPiece(b, opts)
}

// Encode returns [CLS], the text's ids and [SEP], at most MaxTokens in all.
func (t *WordPiece) Encode(text string) []int64 {
	ids := []int64{t.cls}
	limit := t.maxTokens - 1 // room for [SEP]
	for text != "" && len(ids) < limit {
		// The next special token written literally in the text, if any.
		at, special := len(text), ""
		for _, s := range specialTokens {
			if i := strings.Index(text, s); i >= 0 && i < at {
				at, special = i, s
			}
		}
		ids = t.appendText(ids, text[:at], limit)
		if special != "" && len(ids) < limit {
			ids = append(ids, t.vocab[special])
		}
		text = text[at+len(special):]
	}
	return append(ids, t.sep)
}

func (t *WordPiece) appendText(ids []int64, text string, limit int) []int64 {
	for _, word := range splitWords(normalizeBERT(text)) {
		ids = t.appendWord(ids, word)
		if len(ids) >= limit {
			return ids[:limit]
		}
	}
	return ids
}

// appendWord adds word's pieces: the longest vocabulary prefix, then the
// longest "##" continuation, and so on; a word that cannot be covered, or
// is too long, is a single [UNK].
func (t *WordPiece) appendWord(ids []int64, word string) []int64 {
	runes := []rune(word)
	if len(runes) > maxWordRunes {
		return append(ids, t.unk)
	}
	n := len(ids)
	for start := 0; start < len(runes); {
		end, found := len(runes), int64(-1)
		for ; end > start; end-- {
			piece := string(runes[start:end])
			if start > 0 {
				piece = "##" + piece
			}
			if id, ok := t.vocab[piece]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return append(ids[:n], t.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// normalizeBERT is BertNormalizer with clean_text, handle_chinese_chars,
// strip_accents and lowercase all on.
func normalizeBERT(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0 || r == unicode.ReplacementChar || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	var out strings.Builder
	for _, r := range norm.NFD.String(b.String()) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		out.WriteRune(unicode.ToLower(r))
	}
	return out.String()
}

// splitWords splits on whitespace, dropping it, and on punctuation, keeping
// each punctuation character as a word of its own.
func splitWords(s string) []string {
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunct is BERT's punctuation: all of ASCII's non-alphanumeric printable
// characters (so $, +, ^ and the like too) and Unicode's P categories.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

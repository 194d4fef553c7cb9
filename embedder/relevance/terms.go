package relevance

import (
	"strings"

	"lorekeeper.dev/embedder"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Terms are the BM25 terms an entity is indexed under: those of its
// embedding text (embedder.Text: name, type line, prose), so that BM25 and
// the model look at the same words.
// The names it is known by elsewhere (the alias table) are indexed too, so
// that "bigbys hand" finds Arcane Hand.
// The prose the model does not read (embedder.Unread) is indexed apart,
// each of its terms as UnreadPrefix and the term: found by the query's
// terms at UnreadWeight, and not counted in the entity's length (DocLen).
func Terms(e *lkv1.Entity) []string {
	terms := Tokenize(embedder.Text(e, true))
	for _, k := range Aliases().KnownAs(e.GetKind(), e.GetName()) {
		terms = append(terms, Tokenize(k)...)
	}
	for _, t := range Tokenize(embedder.Unread(e, true)) {
		terms = append(terms, UnreadPrefix+t)
	}
	return terms
}

// UnreadPrefix marks the terms of the prose the model does not read.
const UnreadPrefix = "~"

// DocLen is the BM25 length of an entity indexed under terms: its terms
// but those of the prose apart (UnreadPrefix).
func DocLen(terms []string) int {
	n := 0
	for _, t := range terms {
		if !strings.HasPrefix(t, UnreadPrefix) {
			n++
		}
	}
	return n
}

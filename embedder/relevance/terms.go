package relevance

import (
	"lorekeeper.dev/embedder"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Terms are the BM25 terms an entity is indexed under: those of its
// embedding text (embedder.Text: name, type line, prose), so that BM25 and
// the model look at the same words.
// The names it is known by elsewhere (the alias table) are indexed too, so
// that "bigbys hand" finds Arcane Hand.
func Terms(e *lkv1.Entity) []string {
	terms := Tokenize(embedder.Text(e, true))
	for _, k := range Aliases().KnownAs(e.GetKind(), e.GetName()) {
		terms = append(terms, Tokenize(k)...)
	}
	return terms
}

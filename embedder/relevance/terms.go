package relevance

import (
	"lorekeeper.dev/embedder"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Terms are the BM25 terms an entity is indexed under: those of its
// embedding text (embedder.Text: name, type line, prose), so that BM25 and
// the model look at the same words.
func Terms(e *lkv1.Entity) []string {
	return Tokenize(embedder.Text(e, true))
}

package query_test

import (
	"context"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	rel "lorekeeper.dev/embedder/relevance"
)

// Every word the synonym table writes for a query's word is in the bundled
// catalogue's texts: a row whose words no text has finds nothing.
func TestSynonymTable_WordsInCatalogue(t *testing.T) {
	st := snapshotStore(t)
	table := rel.Synonyms()
	if len(table) < 40 {
		t.Fatalf("%d synonym keys, want the whole table", len(table))
	}
	err := st.View(context.Background(), func(v *badgerstore.View) error {
		for said, written := range table {
			for _, w := range written {
				if len(v.TermPostings(w)) == 0 && len(v.TermPostings(rel.UnreadPrefix+w)) == 0 {
					t.Errorf("synonym %q -> %q: no text in the catalogue says %q", said, written, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package relevance

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed synonyms.tsv
var synonymsTSV string

// SynonymWeight is the weight of a word the books write for a word of the
// query (synonyms.tsv), against the query's own words: it finds the text
// that says "fog" for "mist", below the text that says "mist".
const SynonymWeight = 0.8

// SynonymTable maps a query term (a stemmed word, or two adjacent ones
// joined as QueryTerms joins them) to the stemmed words the books write
// for it. It is read-only once built.
type SynonymTable map[string][]string

// Synonyms returns the table in synonyms.tsv, parsed once.
var Synonyms = sync.OnceValue(func() SynonymTable {
	t, err := ParseSynonyms(synonymsTSV)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return t
})

// ParseSynonyms parses a synonym table (the format of synonyms.tsv).
func ParseSynonyms(text string) (SynonymTable, error) {
	t := SynonymTable{}
	for i, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		said, written, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("synonym table line %d: no tab between what is said and what is written", i+1)
		}
		words := Tokenize(strings.ReplaceAll(written, ",", " "))
		if len(words) == 0 {
			return nil, fmt.Errorf("synonym table line %d: nothing written for %q", i+1, said)
		}
		for _, s := range strings.Split(said, ",") {
			terms := Tokenize(s)
			if len(terms) == 0 || len(terms) > 2 {
				return nil, fmt.Errorf("synonym table line %d: %q is not one or two words", i+1, s)
			}
			key := strings.Join(terms, "")
			t[key] = append(t[key], words...)
		}
	}
	return t, nil
}

// weighted are the terms BM25 scores a query by, with their weights: the
// query's own at 1, and the words written for them (t) at SynonymWeight,
// unless the query says them too.
func (t SynonymTable) weighted(terms []string) map[string]float64 {
	w := make(map[string]float64, len(terms))
	for _, q := range terms {
		w[q] = 1
	}
	for _, q := range terms {
		for _, s := range t[q] {
			w[s] = max(w[s], SynonymWeight)
		}
	}
	return w
}

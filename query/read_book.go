package query

import (
	"slices"
	"strings"
)

// bookReader reads the books a question names: a run of at least two
// words starting a document's name ("Tome of Beasts", "Level Up"), the
// name's initials ("SRD", "ToB"), or "homebrew" (every OrcBrew document).
// Several readings, an edition's too (editionReader), narrow each other
// ("SRD 5.1").
type bookReader struct{}

func (bookReader) facet() string { return "book" }

func (bookReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		if r.used[i] {
			continue
		}
		keys, n := bookNamed(r, i)
		if n == 0 {
			n = 1
			for _, d := range r.voc.docs {
				if len(d.acronym) >= 3 && r.words[i] == d.acronym || d.homebrew && (r.words[i] == "homebrew" || r.words[i] == "orcbrew") {
					keys = append(keys, d.key)
				}
			}
		}
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		r.addDocuments(slices.Compact(keys), i, i+n)
		i += n - 1
	}
}

// bookNamed reads the longest run of words from word i that a document's
// name starts with ("Tome of Beasts"), of two words or more: the documents
// it names (those it is the whole name of, when there are: "Tome of
// Beasts", not "Tome of Beasts 2") and its length in words.
func bookNamed(r *reading, i int) ([]string, int) {
	var keys, whole []string
	n := 0
	for _, d := range r.voc.docs {
		m := 0
		for m < len(d.name) && i+m < len(r.words) && !r.used[i+m] && r.words[i+m] == d.name[m] {
			m++
		}
		if m < 2 || m < len(d.name) && stopword(d.name[m-1]) || m < n {
			continue
		}
		if m > n {
			n, keys, whole = m, nil, nil
		}
		keys = append(keys, d.key)
		if m == len(d.name) {
			whole = append(whole, d.key)
		}
	}
	if len(whole) > 0 {
		return whole, n
	}
	return keys, n
}

// editionReader reads an edition: a document's version ("5.1") or the
// year of its game system ("2024").
type editionReader struct{}

func (editionReader) facet() string { return "edition" }

func (editionReader) read(r *reading) {
	for i, w := range r.words {
		if r.used[i] {
			continue
		}
		var keys []string
		for _, d := range r.voc.docs {
			if d.version != "" && w == d.version || len(w) == 4 && strings.HasSuffix(d.gameSystem, "-"+w) {
				keys = append(keys, d.key)
			}
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			r.addDocuments(slices.Compact(keys), i, i+1)
		}
	}
}

package relevance

import (
	"strings"
	"unicode"
)

// stopwords are left out of BM25: they match nearly every text.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "for": true, "from": true, "has": true, "have": true, "i": true, "if": true,
	"in": true, "into": true, "is": true, "it": true, "its": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "their": true, "them": true, "this": true, "to": true, "was": true,
	"what": true, "when": true, "which": true, "who": true, "with": true, "you": true, "your": true,
	"does": true, "do": true, "me": true, "my": true,
	// What an apostrophe leaves of a possessive or a contraction ("an
	// enemy's spell", "don't"): no word, and it would part the words
	// around it (joinPairs).
	"s": true, "t": true, "d": true, "ll": true, "m": true, "re": true, "ve": true,
}

// Tokenize splits text into the lower-case BM25 terms: letters and digits,
// stop words dropped, each word stemmed.
func Tokenize(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if stopwords[w] {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// QueryTerms are the BM25 terms of a query, with each adjacent pair also
// joined, since compound names are one word ("an owl and a bear" finds
// the Owlbear).
func QueryTerms(text string) []string { return joinPairs(Tokenize(text)) }

// QueryTermsFor are the BM25 terms of a query against ix: QueryTerms, with
// misspelt words corrected first (CorrectTerms).
func QueryTermsFor(ix Postings, text string) []string {
	return joinPairs(CorrectTerms(ix, Tokenize(text)))
}

func joinPairs(terms []string) []string {
	n := len(terms)
	for i := 0; i+1 < n; i++ {
		terms = append(terms, terms[i]+terms[i+1])
	}
	return terms
}

// Stem is a light suffix stripper (a small part of Porter's): enough for
// "heal", "heals", "healing" and "healed", or "regenerates" and
// "regeneration", to meet. w must be lower-case.
func Stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ation", "iest", "ion", "ing", "ed", "ly"} {
		// Three letters are a stem too before "ing" after a "y" that
		// stays ("flying" meets "fly", "crying" "cry").
		if short := suf == "ing" && len(w) == 6 && w[2] == 'y'; strings.HasSuffix(w, suf) && (len(w)-len(suf) >= 4 || short) {
			w = w[:len(w)-len(suf)]
			switch suf {
			case "ation":
				w += "at" // "regeneration" meets "regenerates"
			case "iest":
				w += "y" // "heaviest" meets "heavy"
			case "ing", "ed":
				// "swimming" meets "swim", "stunned" "stun" (Porter's
				// rule: not l, s or z, "falling" is "fall").
				if n := len(w); w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
					w = w[:n-1]
				}
			}
			break
		}
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

package relevance

import (
	"math"
	"sort"
	"strings"
)

// BM25 parameters, measured best on the relevance set (query/testdata).
// B was 0.5 until the whole Open5e catalogue (nine monster books of long
// stat blocks) raised the average text length: with 0.5 the short rule
// texts lost ground ("who goes first when a fight breaks out" no longer
// found Initiative); 0.4 keeps every query that passed (0.3 loses three).
const (
	K1 = 1.2
	B  = 0.4
	// PrefixMin is the shortest query term that also matches the longer
	// indexed terms it is a prefix of ("labyrinth" -> "labyrinthine"), at
	// PrefixWeight of its weight, for at most PrefixMax of them.
	PrefixMin    = 5
	PrefixMax    = 8
	PrefixWeight = 0.5
	// SuffixMin is the shortest query term that also matches the compound
	// terms ending in it ("staff" -> "quarterstaff"), at SuffixWeight of
	// its weight (measured: 0.5 lifts relevance-more.jsonl but costs
	// relevance.jsonl; 0.2 keeps both).
	SuffixMin    = 4
	SuffixWeight = 0.2
	// UnreadWeight is the weight of a query term found in the prose the
	// model does not read (UnreadPrefix): a creature's actions count, less
	// than what it is described as.
	UnreadWeight = 0.3
)

// Reverse spells s backwards.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// Posting is one document's occurrences of a term. Slot is the store's
// ordinal for the document.
type Posting struct {
	Slot uint32
	TF   uint16
}

// Postings is what BM25 reads from an index: collection statistics and
// per-term posting lists. Storage keeps them; this package scores.
type Postings interface {
	// DocCount is the number of indexed documents and TotalLen the sum of
	// their lengths in terms.
	DocCount() int
	TotalLen() int
	// TermPostings returns the documents containing term.
	TermPostings(term string) []Posting
	// DocLen is the length in terms of the document in slot.
	DocLen(slot uint32) int
	// Vocabulary returns the indexed terms, sorted.
	Vocabulary() []string
	// ReversedVocabulary returns the indexed terms spelt backwards, sorted:
	// the terms ending in a given suffix are a range of it.
	ReversedVocabulary() []string
}

// Candidates is a set of slots.
type Candidates interface{ Has(slot uint32) bool }

// BM25 adds to scores (indexed by slot) the BM25 score of each candidate
// against terms (see QueryTerms). Collection statistics are over every
// indexed document, not only the candidates, so that a filter does not
// change what a word is worth.
func BM25(ix Postings, terms []string, cand Candidates, scores []float64) {
	n := float64(ix.DocCount())
	if n == 0 {
		return
	}
	avg := float64(ix.TotalLen()) / n
	idfOf := func(t string) float64 {
		df := float64(len(ix.TermPostings(t)))
		if df == 0 {
			return 0
		}
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	// The query's terms, and at a lower weight the words the books write
	// for them (synonyms.tsv).
	weights := Synonyms().weighted(terms)
	idfs := map[string]float64{}
	for t, w := range weights {
		idfs[t] = w * idfOf(t)
	}
	// expand gives the vocabulary words found by key(term) in vocab (words
	// the term starts, or ends when vocab is reversed) weight times their
	// idf, never more than the term's own idf.
	expand := func(minLen int, weight float64, vocab []string, key, word func(string) string) {
		for _, t := range terms {
			if len(t) < minLen {
				continue
			}
			base, kt := idfs[t], key(t)
			i := sort.SearchStrings(vocab, kt)
			for k := 0; i < len(vocab) && k < PrefixMax && strings.HasPrefix(vocab[i], kt); i++ {
				w := word(vocab[i])
				if w == t {
					continue
				}
				k++
				idf := idfOf(w)
				if base > 0 {
					idf = min(idf, base)
				}
				idfs[w] = max(idfs[w], weight*idf)
			}
		}
	}
	// The prose the model does not read, at UnreadWeight (never more than
	// the term's own weight where the rest of the texts have it).
	for t, w := range weights {
		u := UnreadPrefix + t
		idf := w * idfOf(u)
		if base := idfs[t]; base > 0 {
			idf = min(idf, base)
		}
		idfs[u] = max(idfs[u], UnreadWeight*idf)
	}
	same := func(s string) string { return s }
	// Prefix expansion ("fire" -> "fireball").
	expand(PrefixMin, PrefixWeight, ix.Vocabulary(), same, same)
	// Suffix expansion: the compounds a term ends ("staff" ->
	// "quarterstaff", "wolf" -> "werewolf"), at a lower weight still.
	expand(SuffixMin, SuffixWeight, ix.ReversedVocabulary(), Reverse, Reverse)
	for t, idf := range idfs {
		if idf == 0 {
			continue
		}
		for _, p := range ix.TermPostings(t) {
			if !cand.Has(p.Slot) {
				continue
			}
			tf := float64(p.TF)
			dl := float64(ix.DocLen(p.Slot))
			scores[p.Slot] += idf * tf * (K1 + 1) / (tf + K1*(1-B+B*dl/avg))
		}
	}
}

// CorrectTerms replaces each query term that no document contains by the
// indexed term nearest to it in spelling (edit distance 1, or 2 for terms
// of eight letters or more; same first letter; the most frequent on a
// tie), so that "breth" finds "breath" and "tarasque" the Tarrasque.
// Terms with no near spelling stay as they are.
func CorrectTerms(ix Postings, terms []string) []string {
	vocab := ix.Vocabulary()
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t
		rt := []rune(t)
		if len(rt) < 4 || len(ix.TermPostings(t)) > 0 || len(ix.TermPostings(UnreadPrefix+t)) > 0 || !isASCIILetters(t) {
			continue
		}
		maxD := 1
		if len(rt) >= 8 {
			maxD = 2
		}
		best, bestD, bestDF := "", maxD+1, 0
		lo := sort.SearchStrings(vocab, t[:1])
		for j := lo; j < len(vocab) && vocab[j][0] == t[0]; j++ {
			w := vocab[j]
			if d := len(w) - len(t); d > maxD || -d > maxD {
				continue
			}
			d := EditDistance(rt, []rune(w))
			if df := len(ix.TermPostings(w)); d < bestD || d == bestD && df > bestDF {
				best, bestD, bestDF = w, d, df
			}
		}
		if best != "" {
			out[i] = best
		}
	}
	return out
}

// Package relevance is LoreKeeper's one place for how well a text matches a
// query: tokenising and stemming, BM25 and its parameters, character
// trigrams, edit distance and name normalisation, the alias table, and the
// weights that mix keyword, name and semantic scores.
//
// Storage (badgerstore) keeps postings and calls Terms to index an entity;
// the query service calls the scoring functions over those postings. The
// package is pure Go and imports only the proto vocabulary and the embedder
// root, so the query service can link it without linking the model: it
// lives in the embedder module because the indexing side (badgerstore)
// cannot import the query module, which imports it.
package relevance

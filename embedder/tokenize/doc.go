// Package tokenize turns texts into the token ids the embedding models read:
// SentencePiece-style Viterbi segmentation for the Universal Sentence
// Encoder lite, and BERT's uncased WordPiece for all-MiniLM-L6-v2. Both are
// pure Go and safe for concurrent use once built.
package tokenize

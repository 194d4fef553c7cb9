// Package embedder owns turning the entity stream into what the query
// service reads: the embedding model and its tokenizers, the JetStream
// consumer, and the storage layout (Badger documents and secondary indexes,
// the vector index and its embedded and Qdrant backends). It serves no
// queries; the query service reads through its storage package.
package embedder

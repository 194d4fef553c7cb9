// Package query is the read-only gRPC query service: name matching, every
// structured filter, semantic and hybrid ranking, cross-kind search and the
// documents listing. It reads through the embedder's storage package and
// writes nothing.
package query

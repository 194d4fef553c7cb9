// Package ingest owns getting content into LoreKeeper: the Open5e fetcher and
// its schedule, the OrcBrew parser and the bucket watcher, normalising both
// into the proto Entity, and publishing upserts and tombstones to the
// ENTITIES stream. It never touches Badger, Qdrant or the embedding model.
package ingest

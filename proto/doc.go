// Package proto holds LoreKeeper's wire contract: the Entity and Document
// messages, the events on the ENTITIES stream, ingest's key-value state and
// the read-only gRPC query API, with their generated Go code in
// lorekeeper/v1. It imports nothing from the workspace and contains no logic
// beyond the vocabulary (kind and source slugs) every module shares.
package proto

// Command lorekeeper composes LoreKeeper's roles: up (everything in one
// process), ingest, node, mcp, import, sync, model, and the client commands
// search, get, docs and status.
package main

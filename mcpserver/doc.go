// Package mcpserver exposes LoreKeeper to AI assistants over the Model
// Context Protocol: the seven tools, their schemas and descriptions, the
// entity resource template and the markdown renderings. It talks to the
// query service over gRPC only; it never links Badger, NATS or the model.
package mcpserver

// Package mcpserver exposes LoreKeeper to AI assistants over the Model
// Context Protocol: the seven tools, their schemas and descriptions, the
// entity resource template and the markdown renderings. It talks to the
// query service over gRPC only; it never links Badger, NATS or the model.
//
// Usage:
//
//	srv := mcpserver.New(lkv1.NewQueryServiceClient(conn), &mcpserver.Options{
//		Logger:  logger,
//		Metrics: mcpserver.NewMetrics(registry),
//		Version: version,
//	})
//	err := srv.RunStdio(ctx)                         // desktop clients
//	http.Handle("/mcp", srv.HTTPHandler(&mcpserver.HTTPOptions{
//		Stateless:   true,                            // any replica answers any request
//		BearerToken: token,                           // optional
//	}))
//
// Tools: lookup_spell, lookup_creature, lookup_equipment,
// lookup_character_option, lookup_rule, search_dnd_content and
// list_documents. Each takes typed arguments (see SpellInput and the other
// *Input types: canonical names of the spec, aliases item_type, option_type,
// challenge_rating, content_types, and type for rule_type) and returns
// structured content (LookupOutput, SearchOutput, DocumentsOutput) with a
// markdown rendering: spell cards, creature stat blocks, item cards.
// Invalid arguments come back as tool error results naming the parameter and
// its allowed values (ArgumentError); query service failures as a short,
// friendly error result, with the detail logged.
//
// Resources: the template lorekeeper://entity/{key} reads one entity as
// markdown and as JSON. Keys contain colons; both the raw URIs the tools
// return and percent-encoded ones are accepted.
//
// HTTP: the streamable HTTP handler rejects Host and Origin headers that are
// not loopback unless allowed (DNS-rebinding protection), optionally
// requires a bearer token, and bounds request bodies.
package mcpserver

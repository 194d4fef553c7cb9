module lorekeeper.dev/cmd/lorekeeper

go 1.26.0

replace lorekeeper.dev/proto => ../../proto

replace (
	lorekeeper.dev/embedder => ../../embedder
	lorekeeper.dev/ingest => ../../ingest
	lorekeeper.dev/mcpserver => ../../mcpserver
	lorekeeper.dev/query => ../../query
)

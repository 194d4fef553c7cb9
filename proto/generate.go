package proto

// Regenerate with `make proto` (or `go generate ./...` here). protoc comes
// from Debian's protobuf-compiler; the plugins are the versions pinned by the
// tool directives in go.mod.
//go:generate sh -c "protoc -I . -I /usr/include --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=. --go_opt=module=lorekeeper.dev/proto --go-grpc_out=. --go-grpc_opt=module=lorekeeper.dev/proto lorekeeper/v1/*.proto"

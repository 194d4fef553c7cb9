package proto_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the Go code into a temporary
// directory and fails when it differs from what is committed: run
// `make proto` after editing a .proto file.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Fatal("protoc not found: run `make tools` (Debian's protobuf-compiler)")
	}
	out := t.TempDir()
	plugin := func(name string) string {
		b, err := exec.Command("go", "tool", "-n", name).Output()
		if err != nil {
			t.Fatalf("go tool -n %s: %v", name, err)
		}
		return strings.TrimSpace(string(b))
	}
	protos, err := filepath.Glob("lorekeeper/v1/*.proto")
	if err != nil || len(protos) == 0 {
		t.Fatalf("no .proto files: %v", err)
	}
	args := append([]string{
		"-I", ".", "-I", "/usr/include",
		"--plugin=protoc-gen-go=" + plugin("protoc-gen-go"),
		"--plugin=protoc-gen-go-grpc=" + plugin("protoc-gen-go-grpc"),
		"--go_out=" + out, "--go_opt=module=lorekeeper.dev/proto",
		"--go-grpc_out=" + out, "--go-grpc_opt=module=lorekeeper.dev/proto",
	}, protos...)
	if b, err := exec.Command("protoc", args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	generated, err := filepath.Glob(filepath.Join(out, "lorekeeper/v1/*.go"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("protoc generated nothing: %v", err)
	}
	for _, path := range generated {
		rel, _ := filepath.Rel(out, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(rel)
		if err != nil {
			t.Errorf("%s: generated but not committed: %v", rel, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from a regeneration: run `make proto`", rel)
		}
	}
}

// Package modeltest says where tests find the model and ONNX Runtime that
// `make model` installs.
package modeltest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the model directory for tests: LOREKEEPER_MODEL_DIR (the
// Makefile exports it), else the repository's .models, where `make model`
// puts it. Tests check for the files they need and fail, naming
// `make model`, when they are absent.
func Dir() string {
	if d := os.Getenv("LOREKEEPER_MODEL_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".models")
}

// Need fails the test, naming `make model`, unless every path exists.
func Need(tb testing.TB, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("model files missing (%v): run `make model`, or set LOREKEEPER_MODEL_DIR", err)
		}
	}
}

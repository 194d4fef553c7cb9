// Package modeltest says where tests find the model and ONNX Runtime that
// `make model` installs.
package modeltest

import (
	"os"
	"path/filepath"
	"runtime"
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

package usetoonnx

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sort"
	"strings"

	"lorekeeper.dev/embedder/onnxgraph"
)

//go:embed *.go
var sources embed.FS

// ConverterID identifies the converter compiled into this binary: the
// sha256 of the non-test Go sources of this package and of onnxgraph,
// concatenated in path order. A model directory records the ID that
// converted its model, so a binary with a changed converter converts again.
func ConverterID() string {
	type file struct {
		path string
		fsys fs.FS
	}
	var files []file
	for _, pkg := range []struct {
		dir  string
		fsys fs.FS
	}{{"onnxgraph", onnxgraph.Sources}, {"usetoonnx", sources}} {
		names, _ := fs.Glob(pkg.fsys, "*.go") // the pattern is valid; embedded files always read
		for _, n := range names {
			if !strings.HasSuffix(n, "_test.go") {
				files = append(files, file{pkg.dir + "/" + n, pkg.fsys})
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	h := sha256.New()
	for _, f := range files {
		b, _ := fs.ReadFile(f.fsys, f.path[strings.IndexByte(f.path, '/')+1:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

package ingest

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// UnpackBundle reads a bundled copy of a source, a tar compressed with zstd
// (the Makefile's snapshot targets make them), and returns its regular
// files by their path inside folder: "v2/spells/page-1.json" for the entry
// "open5e/v2/spells/page-1.json" when folder is "open5e". The files are
// slices of one buffer holding the whole tar.
func UnpackBundle(b []byte, folder string) (map[string][]byte, error) {
	// One frame, written with its content size: DecodeAll allocates the
	// tar once, with no window beyond it.
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	raw, err := d.DecodeAll(b, nil)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(raw)
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// The tar reader reads whole header blocks and nothing more, so
		// the file's data starts where the reader stands.
		start := len(raw) - r.Len()
		end := start + int(h.Size)
		if h.Size < 0 || end > len(raw) {
			return nil, fmt.Errorf("read %s: %d bytes past the end of the tar", h.Name, end-len(raw))
		}
		name := strings.TrimPrefix(path.Clean(h.Name), folder+"/")
		files[name] = raw[start:end:end]
	}
}

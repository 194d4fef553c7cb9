package vectorbundle

import (
	"bytes"
	_ "embed"
)

// BundledFile is the bundled vectors' file in this package's directory,
// which `make vectors` writes.
const BundledFile = "bundled.vec.zst"

//go:embed bundled.vec.zst
var bundled []byte

// Bundled decodes the bundle the binary carries: the vectors of the
// entities whose content is fixed when it is built.
func Bundled() (*Bundle, error) { return Decode(bytes.NewReader(bundled)) }

// BundledContents reads the header and the Contents of the bundle the
// binary carries, not its vectors.
func BundledContents() (*Bundle, error) { return DecodeContents(bytes.NewReader(bundled)) }

// BundledSize is the compressed size of the bundle the binary carries.
func BundledSize() int { return len(bundled) }

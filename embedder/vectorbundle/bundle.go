// Package vectorbundle holds vectors made ahead of time: for each text a
// model embedded, its vector, keyed by the text's hash and recorded with
// the checksum of the model that made it. The binary carries one (Bundled)
// for every entity whose content is fixed when it is built (the bundled
// Open5e snapshot), made by `make vectors`: a first start, or a rebuild of
// a lost store, then takes those vectors from it instead of computing them.
//
// A text whose hash the bundle lacks (homebrew, live Open5e content, a text
// changed since the bundle was made) is embedded by the model, as is every
// text when the model's checksum is not the bundle's (another model, or
// the same model converted differently). A stale bundle costs time, never
// a wrong vector.
//
// Vectors are stored as int8 per dimension with one float32 scale per
// vector (the largest component maps to ±127), zstd-compressed, and come
// back at unit length: each component within one step (the scale) of the
// model's, about 0.002 for USE-lite's 512 dimensions.
package vectorbundle

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// HashSize is the length of a text hash: the first 16 bytes of its sha256.
const HashSize = 16

// Hash is a text's key in a bundle.
type Hash [HashSize]byte

// TextHash is the key of text: the text exactly as the model is given it.
func TextHash(text string) Hash {
	sum := sha256.Sum256([]byte(text))
	return Hash(sum[:HashSize])
}

// Header describes a bundle.
type Header struct {
	// Model is the model's registry name ("use-lite").
	Model string `json:"model"`
	// Checksum identifies the model's files (onnx.Model.Checksum): only a
	// model with this checksum makes these vectors.
	Checksum   string `json:"checksum"`
	Dimensions int    `json:"dimensions"`
	Count      int    `json:"count"`
	// Entries is how many entities the bundled content holds (Contents).
	Entries int `json:"entries"`
}

// Entry is one entity of the bundled content: what a first start will
// have stored once it has loaded it all, known before it starts.
type Entry struct {
	Key  string `json:"k"`
	Name string `json:"n"`
}

// ErrFormat is returned by Decode for bytes that are not a bundle.
var ErrFormat = errors.New("vectorbundle: not a vector bundle")

const magic = "LOREKEEPER VECTORS 1\n"

// Bundle is a decoded bundle. It is read-only and safe for concurrent use.
type Bundle struct {
	Header
	// Contents are the entities of the content the vectors were made of.
	Contents []Entry

	hashes []byte    // Count hashes, ascending
	scales []float32 // one per vector
	codes  []byte    // Count × Dimensions int8s
}

// Len is how many vectors b holds.
func (b *Bundle) Len() int { return len(b.scales) }

// Lookup returns the vector of the text whose hash is h, at unit length.
func (b *Bundle) Lookup(h Hash) ([]float32, bool) {
	i, ok := b.find(h)
	if !ok {
		return nil, false
	}
	return dequantize(b.codes[i*b.Dimensions:(i+1)*b.Dimensions], b.scales[i]), true
}

// find is the index of h's vector.
func (b *Bundle) find(h Hash) (int, bool) {
	n := b.Len()
	i := sort.Search(n, func(i int) bool { return bytes.Compare(b.hashes[i*HashSize:(i+1)*HashSize], h[:]) >= 0 })
	return i, i < n && bytes.Equal(b.hashes[i*HashSize:(i+1)*HashSize], h[:])
}

// Hashes lists the hashes b holds, ascending.
func (b *Bundle) Hashes() []Hash {
	out := make([]Hash, b.Len())
	for i := range out {
		copy(out[i][:], b.hashes[i*HashSize:])
	}
	return out
}

// Builder collects vectors for a new bundle.
type Builder struct {
	header   Header
	vecs     map[Hash]stored
	contents []Entry
}

// SetContents records the entities of the content the vectors are made
// of, in the order given.
func (bl *Builder) SetContents(es []Entry) { bl.contents = es }

// stored is a vector as a bundle stores it.
type stored struct {
	codes []byte
	scale float32
}

// NewBuilder starts a bundle of vectors made by the model h names
// (h.Count is ignored).
func NewBuilder(h Header) *Builder {
	return &Builder{header: h, vecs: map[Hash]stored{}}
}

// Add records the vector the model made of the text whose hash is h. A
// vector of the wrong length is an error.
func (bl *Builder) Add(h Hash, vec []float32) error {
	if len(vec) != bl.header.Dimensions {
		return fmt.Errorf("vectorbundle: a vector of %d dimensions, want %d", len(vec), bl.header.Dimensions)
	}
	codes, scale := quantize(vec)
	bl.vecs[h] = stored{codes, scale}
	return nil
}

// Keep copies h's vector from b as b stores it, and reports whether b
// holds it. b must be of the builder's model.
func (bl *Builder) Keep(b *Bundle, h Hash) bool {
	i, ok := b.find(h)
	if ok && b.Dimensions == bl.header.Dimensions {
		bl.vecs[h] = stored{b.codes[i*b.Dimensions : (i+1)*b.Dimensions], b.scales[i]}
		return true
	}
	return false
}

// Len is how many vectors have been added.
func (bl *Builder) Len() int { return len(bl.vecs) }

// Encode writes the bundle: the same vectors always give the same bytes.
func (bl *Builder) Encode(w io.Writer) error {
	hashes := make([]Hash, 0, len(bl.vecs))
	for h := range bl.vecs {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	hd := bl.header
	hd.Count, hd.Entries = len(hashes), len(bl.contents)
	head, err := json.Marshal(hd)
	if err != nil {
		return fmt.Errorf("vectorbundle: encode header: %w", err)
	}
	contents, err := json.Marshal(bl.contents)
	if err != nil {
		return fmt.Errorf("vectorbundle: encode contents: %w", err)
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("vectorbundle: %w", err)
	}
	// A bufio.Writer keeps its first error: Flush returns it.
	bw := bufio.NewWriter(zw)
	_, _ = bw.WriteString(magic)
	_, _ = bw.Write(head)
	_ = bw.WriteByte('\n')
	_, _ = bw.Write(contents) // one line: JSON escapes newlines in strings
	_ = bw.WriteByte('\n')
	for _, h := range hashes {
		_, _ = bw.Write(h[:])
	}
	var scale [4]byte
	for _, h := range hashes {
		binary.LittleEndian.PutUint32(scale[:], math.Float32bits(bl.vecs[h].scale))
		_, _ = bw.Write(scale[:])
	}
	for _, h := range hashes {
		_, _ = bw.Write(bl.vecs[h].codes)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vectorbundle: write: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("vectorbundle: write: %w", err)
	}
	return nil
}

// Decode reads a bundle Encode wrote.
func Decode(r io.Reader) (*Bundle, error) { return decode(r, false) }

// DecodeContents reads only a bundle's header and Contents, not its
// vectors.
func DecodeContents(r io.Reader) (*Bundle, error) { return decode(r, true) }

func decode(r io.Reader, contentsOnly bool) (*Bundle, error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(br, m); err != nil || string(m) != magic {
		return nil, ErrFormat
	}
	var b Bundle
	for _, part := range []struct {
		name string
		into any
	}{{"header", &b.Header}, {"contents", &b.Contents}} {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFormat, part.name, err)
		}
		if err := json.Unmarshal(line, part.into); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFormat, part.name, err)
		}
	}
	if len(b.Contents) != b.Entries {
		return nil, fmt.Errorf("%w: %d entries, the header says %d", ErrFormat, len(b.Contents), b.Entries)
	}
	if contentsOnly {
		return &b, nil
	}
	n, d := b.Count, b.Dimensions
	if n < 0 || d <= 0 || n > 1<<24 || d > 1<<14 {
		return nil, fmt.Errorf("%w: %d vectors of %d dimensions", ErrFormat, n, d)
	}
	b.hashes = make([]byte, n*HashSize)
	scales := make([]byte, n*4)
	codes := make([]byte, n*d)
	for _, part := range [][]byte{b.hashes, scales, codes} {
		if _, err := io.ReadFull(br, part); err != nil {
			return nil, fmt.Errorf("%w: %d vectors: %w", ErrFormat, n, err)
		}
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: bytes after %d vectors", ErrFormat, n)
	}
	b.scales = make([]float32, n)
	for i := range b.scales {
		b.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(scales[4*i:]))
	}
	b.codes = codes
	for i := 1; i < n; i++ {
		if bytes.Compare(b.hashes[(i-1)*HashSize:i*HashSize], b.hashes[i*HashSize:(i+1)*HashSize]) >= 0 {
			return nil, fmt.Errorf("%w: hashes out of order", ErrFormat)
		}
	}
	return &b, nil
}

// quantize maps v to int8 steps of scale = max|v|/127.
func quantize(v []float32) ([]byte, float32) {
	var top float32
	for _, x := range v {
		top = max(top, float32(math.Abs(float64(x))))
	}
	q := make([]byte, len(v))
	if top == 0 {
		return q, 0
	}
	scale := top / 127
	for i, x := range v {
		q[i] = byte(int8(max(-127, min(127, math.Round(float64(x/scale))))))
	}
	return q, scale
}

// dequantize is the vector of the int8s q at unit length.
func dequantize(q []byte, scale float32) []float32 {
	v := make([]float32, len(q))
	var ss float64
	for i, c := range q {
		v[i] = float32(int8(c)) * scale
		ss += float64(v[i]) * float64(v[i])
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// Step is the quantization step of the vector stored for h (a component
// of Lookup's vector is within one step of the model's), and whether b
// holds h.
func (b *Bundle) Step(h Hash) (float32, bool) {
	i, ok := b.find(h)
	if !ok {
		return 0, false
	}
	return b.scales[i], true
}

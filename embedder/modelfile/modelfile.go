// Package modelfile knows the embedding models LoreKeeper can run: where
// their files live under a model directory, what they are, and, for models
// published as files, where to download them and the sha256 they must have.
//
// Layout of a model directory (--model-dir, LOREKEEPER_MODEL_DIR):
//
//	libonnxruntime.so.1           ONNX Runtime, from Fetch
//	use-lite/tfjs/                USE-lite's TF.js graph as published, from Fetch
//	use-lite/model.onnx           that graph converted to ONNX by Fetch
//	use-lite/vocab.json
//	use-lite/CONVERTER            the ConverterID that converted it
//	minilm-l6-v2/model.onnx       all-MiniLM-L6-v2, from Pull
//	minilm-l6-v2/vocab.txt
//	SHA256SUMS                    what Fetch installed
package modelfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// LibraryName is the ONNX Runtime shared library's file name in a model
// directory.
const LibraryName = "libonnxruntime.so.1"

// Tokenizer kinds.
const (
	SentencePiece = "sentencepiece"
	WordPiece     = "wordpiece"
)

// Names of the known models.
const (
	USELite    = "use-lite"
	MiniLML6V2 = "minilm-l6-v2"
)

// ErrUnknownModel is returned for a model name not in the registry.
var ErrUnknownModel = errors.New("unknown model")

// Model describes one known model.
type Model struct {
	Name       string
	Dimensions int
	// MaxTokens is the longest token sequence the model reads, special
	// tokens included; longer texts are truncated.
	MaxTokens int
	// Lowercase: the vocabulary is case-sensitive and texts should be
	// lower-cased before embedding (see embedder.ModelInfo).
	Lowercase bool
	Tokenizer string
	// VocabFile is the tokenizer's vocabulary, next to model.onnx.
	VocabFile string
	// Obtain says how a missing model is obtained, for error messages.
	Obtain string
	// Files are what Pull downloads; empty for the model Fetch builds.
	Files []File
}

// File is one downloadable file of a model.
type File struct {
	// Name is the file's name in the model's directory.
	Name string
	// Path is the file's path in the source repository.
	Path   string
	Size   int64
	SHA256 string
}

// Hugging Face repository and revision Pull downloads from. The sha256 pins
// come from the repository's LFS pointers (and, for vocab.txt, from the
// official tokenizer's vocabulary).
const (
	miniLMRepo     = "sentence-transformers/all-MiniLM-L6-v2"
	miniLMRevision = "main"
)

var models = map[string]Model{
	USELite: {
		Name:       USELite,
		Dimensions: 512,
		// The TF.js graph keeps only the first 128 tokens.
		MaxTokens: 128,
		Lowercase: true,
		Tokenizer: SentencePiece,
		VocabFile: "vocab.json",
		Obtain:    "run `lorekeeper model fetch` (or `make model`)",
	},
	MiniLML6V2: {
		Name:       MiniLML6V2,
		Dimensions: 384,
		// sentence-transformers' max_seq_length for this model.
		MaxTokens: 256,
		Lowercase: false, // the WordPiece tokenizer lower-cases itself
		Tokenizer: WordPiece,
		VocabFile: "vocab.txt",
		Obtain:    "run `lorekeeper model pull minilm-l6-v2` (downloads from Hugging Face) and `lorekeeper model fetch` (ONNX Runtime)",
		Files: []File{
			{Name: "vocab.txt", Path: "vocab.txt", Size: 231508,
				SHA256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
			{Name: "model.onnx", Path: "onnx/model.onnx", Size: 90405214,
				SHA256: "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452"},
		},
	},
}

// Lookup returns the named model.
func Lookup(name string) (Model, error) {
	m, ok := models[name]
	if !ok {
		return Model{}, fmt.Errorf("model %q (known: %v): %w", name, Names(), ErrUnknownModel)
	}
	return m, nil
}

// Names lists the known models' names, sorted.
func Names() []string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Dir is the model's directory under the model directory root.
func (m Model) Dir(root string) string { return filepath.Join(root, m.Name) }

// ModelPath is the model's ONNX file under root.
func (m Model) ModelPath(root string) string { return filepath.Join(root, m.Name, "model.onnx") }

// VocabPath is the model's vocabulary file under root.
func (m Model) VocabPath(root string) string { return filepath.Join(root, m.Name, m.VocabFile) }

// LibraryPath is the ONNX Runtime library under root.
func LibraryPath(root string) string { return filepath.Join(root, LibraryName) }

// Checksum identifies the model's files under root, hex: the sha256 of its
// ONNX file followed by its vocabulary. Two model directories with the
// same checksum make the same vectors (ONNX Runtime aside), so vectors made
// ahead of time are recorded with it (package vectorbundle).
func (m Model) Checksum(root string) (string, error) {
	h := sha256.New()
	for _, p := range []string{m.ModelPath(root), m.VocabPath(root)} {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("checksum of model %s: %w", m.Name, err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("checksum of model %s: %w", m.Name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

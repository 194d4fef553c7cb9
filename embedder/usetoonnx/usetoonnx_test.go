package usetoonnx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/usetoonnx"
)

// modelDir is where `make model` keeps the TF.js model (use-lite/tfjs)
// and the runtime library. The tests fail, naming `make model`, without it.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := modeltest.Dir()
	modeltest.Need(t, modelfile.LibraryPath(dir), filepath.Join(tfjsDir(dir), "model.json"))
	return dir
}

func tfjsDir(root string) string { return filepath.Join(root, "use-lite", "tfjs") }

// TestConvert_matchesTFJS converts the published TF.js model here and runs
// the result: its int8 weights keep the vectors within cosine 0.999 of the
// TF.js model's own (0.9992 at worst over a thousand catalogue texts).
func TestConvert_matchesTFJS(t *testing.T) {
	root := modelDir(t)
	b, err := usetoonnx.Convert(tfjsDir(root))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec, _ := modelfile.Lookup(modelfile.USELite)
	if err := os.MkdirAll(spec.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec.ModelPath(dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, err := os.ReadFile(filepath.Join(tfjsDir(root), "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec.VocabPath(dir), vocab, 0o644); err != nil {
		t.Fatal(err)
	}

	m, err := onnx.Open(dir, &onnx.Options{LibraryPath: modelfile.LibraryPath(root), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	raw, err := os.ReadFile("../tokenize/testdata/use/use_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Texts      []string    `json:"texts"`
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Embeddings) == 0 {
		t.Fatal("no reference embeddings")
	}
	got, err := m.Embed(context.Background(), ref.Texts[:len(ref.Embeddings)])
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range ref.Embeddings {
		var dot, norm float64
		for j := range want {
			dot += float64(got[i][j]) * want[j]
			norm += want[j] * want[j]
		}
		if c := dot / math.Sqrt(norm); c < 0.999 {
			t.Errorf("text %q: cosine %v to the TF.js vector, want at least 0.999", ref.Texts[i], c)
		}
	}

	// The conversion is deterministic, so `make model`'s checksums are stable.
	again, err := usetoonnx.Convert(tfjsDir(root))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Error("two conversions of the same model differ")
	}
}

func TestConvert_errors(t *testing.T) {
	root := modelDir(t)
	if _, err := usetoonnx.Convert(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory: err = %v, want os.ErrNotExist", err)
	}

	// A model whose weights are not the shapes the converter knows.
	src := tfjsDir(root)
	manifest, err := os.ReadFile(filepath.Join(src, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(w map[string]any)
	}{
		{"embedding shape", func(w map[string]any) {
			if w["name"] == "module/Embeddings_en" {
				w["shape"] = []int{8002, 255}
			}
		}},
		{"missing weight", func(w map[string]any) {
			if w["name"] == "module/Encoder_en/hidden_layers/tanh_layer_0/bias" {
				w["name"] = "renamed"
			}
		}},
		{"quantized", func(w map[string]any) {
			w["quantization"] = map[string]any{"dtype": "uint8", "min": 0, "scale": 1}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m struct {
				ModelTopology   json.RawMessage  `json:"modelTopology"`
				WeightsManifest []map[string]any `json:"weightsManifest"`
			}
			if err := json.Unmarshal(manifest, &m); err != nil {
				t.Fatal(err)
			}
			for _, w := range m.WeightsManifest[0]["weights"].([]any) {
				tt.edit(w.(map[string]any))
			}
			edited, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "model.json"), edited, 0o644); err != nil {
				t.Fatal(err)
			}
			shards, _ := filepath.Glob(filepath.Join(src, "group1-shard*"))
			for _, s := range shards {
				if err := os.Symlink(s, filepath.Join(dir, filepath.Base(s))); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := usetoonnx.Convert(dir); !errors.Is(err, usetoonnx.ErrUnexpectedModel) {
				t.Errorf("err = %v, want ErrUnexpectedModel", err)
			}
		})
	}
}

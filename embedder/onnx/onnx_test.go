package onnx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/onnxgraph"
)

// modelDir is where `make model` put the runtime and USE-lite. The tests
// need them and fail, rather than skip, when they are absent: `make test`
// runs `make model` first.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := modeltest.Dir()
	use, _ := modelfile.Lookup(modelfile.USELite)
	modeltest.Need(t, modelfile.LibraryPath(dir), use.ModelPath(dir), use.VocabPath(dir))
	return dir
}

func openUSE(t testing.TB, opts *onnx.Options) *onnx.Model {
	t.Helper()
	if opts == nil {
		opts = &onnx.Options{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	m, err := onnx.Open(modelDir(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

type useReference struct {
	Texts      []string    `json:"texts"`
	Embeddings [][]float64 `json:"embeddings"`
}

func loadReference(t testing.TB) useReference {
	t.Helper()
	b, err := os.ReadFile("../tokenize/testdata/use/use_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref useReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	// The reference has no vector for its last text, the empty string.
	if len(ref.Texts) != 10 || len(ref.Embeddings) != 9 {
		t.Fatalf("reference has %d texts, %d embeddings", len(ref.Texts), len(ref.Embeddings))
	}
	return ref
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestModel_Embed_matchesTFJS(t *testing.T) {
	ref := loadReference(t)
	// Batch sizes 1 (no padding), 3 and the default (one padded batch) must
	// all give the TF.js model's vectors.
	for _, bs := range []int{1, 3, 0} {
		m := openUSE(t, &onnx.Options{BatchSize: bs})
		got, err := m.Embed(context.Background(), ref.Texts[:len(ref.Embeddings)])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ref.Embeddings) {
			t.Fatalf("batch size %d: %d vectors for %d texts", bs, len(got), len(ref.Embeddings))
		}
		worst := 1.0
		for i, want := range ref.Embeddings {
			if len(got[i]) != len(want) {
				t.Fatalf("text %d: %d dimensions, want %d", i, len(got[i]), len(want))
			}
			var dot, norm float64
			for j := range want {
				dot += float64(got[i][j]) * want[j]
				norm += want[j] * want[j]
			}
			c := dot / math.Sqrt(norm)
			worst = min(worst, c)
			// The int8 weights move a vector by cosine 0.0008 at most over
			// a thousand catalogue texts.
			if c < 0.999 {
				t.Errorf("batch size %d, text %q: cosine %v to the TF.js vector, want at least 0.999", bs, ref.Texts[i], c)
			}
		}
		t.Logf("batch size %d: lowest cosine to TF.js %.5f", bs, worst)
	}
}

func TestModel_Embed_sanityRanking(t *testing.T) {
	m := openUSE(t, nil)
	b, err := os.ReadFile("testdata/sentences.json")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	if err := json.Unmarshal(b, &texts); err != nil {
		t.Fatal(err)
	}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	query := vecs[0] // "protect from fire damage"
	want := []struct {
		prefix string
		score  float64
	}{{"Fire Shield", 0.575}, {"Fireball", 0.370}, {"Ice Storm", 0.314}, {"Cure Wounds", 0.289}}
	prev := 2.0
	for _, w := range want {
		i := indexPrefix(t, texts, w.prefix)
		got := cosine(query, vecs[i])
		if math.Abs(got-w.score) > 0.005 {
			t.Errorf("cosine(query, %s) = %.3f, want %.3f", w.prefix, got, w.score)
		}
		if got >= prev {
			t.Errorf("%s scores %.3f, not below the previous %.3f", w.prefix, got, prev)
		}
		prev = got
	}
}

func indexPrefix(t *testing.T, texts []string, prefix string) int {
	t.Helper()
	for i, s := range texts {
		if strings.HasPrefix(s, prefix+":") {
			return i
		}
	}
	t.Fatalf("no text starts with %q", prefix)
	return -1
}

func TestModel_Embed_unitVectorsAndEdges(t *testing.T) {
	m := openUSE(t, &onnx.Options{BatchSize: 2})
	long := strings.Repeat("the fireball spell explodes in a sphere of flame ", 60) // well over 128 tokens
	texts := []string{"", "a", long, long + " and more words after the clip", "a"}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if len(v) != 512 {
			t.Fatalf("text %d: %d dimensions", i, len(v))
		}
		if n := cosine(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: squared norm %v, want 1", i, n)
		}
	}
	if c := cosine(vecs[1], vecs[4]); math.Abs(c-1) > 1e-6 {
		t.Errorf("the same text in different batches: cosine %v, want 1", c)
	}
	// Only the first 128 tokens count, so text after them changes nothing.
	if c := cosine(vecs[2], vecs[3]); math.Abs(c-1) > 1e-6 {
		t.Errorf("texts differing after the clip: cosine %v, want 1", c)
	}
	if got, err := m.Embed(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v; want none, nil", len(got), err)
	}
}

func TestModel_Embed_cancelled(t *testing.T) {
	m := openUSE(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"fireball"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestModel_Embed_cancelledMidway(t *testing.T) {
	m := openUSE(t, &onnx.Options{BatchSize: 8})
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("spell %d deals fire damage in a sphere ", i), 12)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Embed(ctx, texts)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let some batches run first
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Embed cancelled midway: err = %v, want context.Canceled", err)
	}
	// The model is still usable afterwards.
	if _, err := m.Embed(context.Background(), []string{"fireball"}); err != nil {
		t.Errorf("Embed after a cancelled call: %v", err)
	}
}

func TestModel_Info(t *testing.T) {
	m := openUSE(t, nil)
	want := embedder.ModelInfo{Name: "use-lite", Dimensions: 512, Lowercase: true}
	if got := m.Info(); got != want {
		t.Errorf("Info() = %+v, want %+v", got, want)
	}
}

func TestOpen_missing(t *testing.T) {
	installed := modelDir(t)
	empty := t.TempDir()
	tests := []struct {
		name     string
		dir      string
		opts     *onnx.Options
		mentions string
	}{
		{"no use-lite", empty, nil, "lorekeeper model fetch"},
		{"no minilm", empty, &onnx.Options{Model: "minilm-l6-v2"}, "lorekeeper model pull minilm-l6-v2"},
		{"no library", installed, &onnx.Options{LibraryPath: filepath.Join(empty, "libonnxruntime.so.1")}, "lorekeeper model fetch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := onnx.Open(tt.dir, tt.opts)
			if err == nil {
				m.Close()
				t.Fatal("Open: no error")
			}
			if !errors.Is(err, onnx.ErrNotInstalled) {
				t.Errorf("err = %v, want ErrNotInstalled", err)
			}
			if !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("err = %q, want it to mention %q", err, tt.mentions)
			}
		})
	}
	if _, err := onnx.Open(installed, &onnx.Options{Model: "gpt-17"}); !errors.Is(err, modelfile.ErrUnknownModel) {
		t.Errorf("unknown model: err = %v, want ErrUnknownModel", err)
	}
}

// TestOpen_miniLMShape loads a model of all-MiniLM-L6-v2's exact shape with
// random weights, made here, with the real vocabulary: loading, WordPiece,
// token_type_ids, mean pooling over the mask and normalisation all run as
// they would with the downloaded model.
func TestOpen_miniLMShape(t *testing.T) {
	dir := miniLMDir(t)
	m, err := onnx.Open(dir, &onnx.Options{Model: "minilm-l6-v2", LibraryPath: modelfile.LibraryPath(modelDir(t)), BatchSize: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, want := m.Info(), (embedder.ModelInfo{Name: "minilm-l6-v2", Dimensions: 384}); got != want {
		t.Errorf("Info() = %+v, want %+v", got, want)
	}
	texts := []string{"fire", "Fireball: a bright streak blossoms into an explosion of flame", "ice storm", "FIRE", "fire"}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if len(v) != 384 {
			t.Fatalf("text %d: %d dimensions", i, len(v))
		}
		if n := cosine(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: squared norm %v, want 1", i, n)
		}
	}
	// "fire" alone and "fire" padded beside a longer text in another batch
	// must agree: padding is masked out of attention and pooling.
	if c := cosine(vecs[0], vecs[4]); math.Abs(c-1) > 1e-5 {
		t.Errorf("same text, different batches: cosine %v, want 1", c)
	}
	// The tokenizer lower-cases, so case does not matter.
	if c := cosine(vecs[0], vecs[3]); math.Abs(c-1) > 1e-5 {
		t.Errorf("fire vs FIRE: cosine %v, want 1", c)
	}
	if c := cosine(vecs[0], vecs[2]); c > 0.9999 {
		t.Errorf("different texts: cosine %v, want them to differ", c)
	}
}

// miniLMDir writes the random same-shape model and the real vocabulary
// into a temporary model directory.
func miniLMDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	spec, _ := modelfile.Lookup(modelfile.MiniLML6V2)
	if err := os.MkdirAll(spec.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec.ModelPath(dir), onnxgraph.RandomBERT(onnxgraph.MiniLML6V2(), 1).Marshal("onnx test"), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, err := os.ReadFile("../tokenize/testdata/minilm/vocab.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec.VocabPath(dir), vocab, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestModel_Embed_concurrent(t *testing.T) {
	m := openUSE(t, &onnx.Options{BatchSize: 4})
	texts := []string{"fire shield", "ice storm", "cure wounds", "fireball", "bag of holding", "mind flayer", "a", ""}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			// Each worker embeds the texts rotated, so batches differ.
			rot := append(append([]string{}, texts[w:]...), texts[:w]...)
			got, err := m.Embed(context.Background(), rot)
			if err == nil {
				for i := range rot {
					if c := cosine(got[i], want[(i+w)%len(texts)]); math.Abs(c-1) > 1e-5 {
						err = fmt.Errorf("worker %d, text %q: cosine %v to the sequential vector", w, rot[i], c)
						break
					}
				}
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestModel_Embed_threads: batches run at once give each text the vector
// it gets when they run one after another.
func TestModel_Embed_threads(t *testing.T) {
	texts := make([]string, 23)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("creature %d breathes fire ", i), i%7+1)
	}
	embed := func(threads int) [][]float32 {
		t.Helper()
		m := openUSE(t, &onnx.Options{BatchSize: 2, Threads: threads})
		got, err := m.Embed(t.Context(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(texts) {
			t.Fatalf("%d threads: %d vectors for %d texts", threads, len(got), len(texts))
		}
		return got
	}
	want, got := embed(1), embed(3)
	for i := range texts {
		if len(got[i]) == 0 || !slices.Equal(got[i], want[i]) {
			t.Errorf("text %d: vector with three runs at once differs from one at a time", i)
		}
	}
}

// TestModel_Trim: a trimmed model embeds as before, also while Trim swaps
// its session under concurrent runs; after Close, Trim says the model is
// closed.
func TestModel_Trim(t *testing.T) {
	m, err := onnx.Open(modelDir(t), &onnx.Options{Logger: slog.New(slog.DiscardHandler), BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"fire shield", "ice storm", "cure wounds", "fireball", "bag of holding"}
	want, err := m.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got [][]float32) {
		t.Helper()
		for i := range texts {
			if c := cosine(got[i], want[i]); math.Abs(c-1) > 1e-5 {
				t.Errorf("%s: %q has cosine %v to its vector before", what, texts[i], c)
			}
		}
	}
	errs := make(chan error, 1)
	go func() {
		for range 3 {
			if err := m.Trim(); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range 5 {
		got, err := m.Embed(t.Context(), texts)
		if err != nil {
			t.Fatalf("Embed during Trim: %v", err)
		}
		check("during Trim", got)
	}
	if err := <-errs; err != nil {
		t.Fatalf("Trim: %v", err)
	}
	got, err := m.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	check("after Trim", got)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Trim(); !errors.Is(err, onnx.ErrClosed) {
		t.Errorf("Trim after Close: err = %v, want ErrClosed", err)
	}
	if _, err := m.Embed(t.Context(), texts); !errors.Is(err, onnx.ErrClosed) {
		t.Errorf("Embed after Trim after Close: err = %v, want ErrClosed", err)
	}
}

func TestModel_Embed_afterClose(t *testing.T) {
	m, err := onnx.Open(modelDir(t), &onnx.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := m.Embed(context.Background(), []string{"fireball"}); !errors.Is(err, onnx.ErrClosed) {
		t.Errorf("Embed after Close: err = %v, want ErrClosed", err)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := openUSE(t, &onnx.Options{Metrics: onnx.NewMetrics(reg), BatchSize: 2})
	if _, err := m.Embed(context.Background(), []string{"fire shield", "ice storm", "fireball"}); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s: %s", p.Metric, p.Text)
	}
	want := `
# HELP lorekeeper_embedder_embedded_texts_total Texts embedded.
# TYPE lorekeeper_embedder_embedded_texts_total counter
lorekeeper_embedder_embedded_texts_total{model="use-lite"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lorekeeper_embedder_embedded_texts_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "lorekeeper_embedder_embed_duration_seconds"); n != 1 {
		t.Errorf("duration series: %d, want 1", n)
	}
}

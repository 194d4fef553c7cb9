// Package onnx runs the embedding models with ONNX Runtime
// (github.com/yalue/onnxruntime_go, which dlopens libonnxruntime): one
// session per model, batched inference, L2-normalised vectors.
//
// It is the only package that links cgo for the model; the query service
// and the MCP server must not import it.
package onnx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/tokenize"
)

// Defaults for Options' zero fields.
const (
	DefaultModel     = modelfile.USELite
	DefaultThreads   = 2
	DefaultBatchSize = 4
)

// ErrNotInstalled reports a missing runtime library or model file. Its
// message says how to obtain it (`lorekeeper model fetch`, or for all-MiniLM-L6-v2
// `lorekeeper model pull minilm-l6-v2`).
var ErrNotInstalled = errors.New("model not installed")

// ErrClosed is returned by Embed after Close.
var ErrClosed = errors.New("model is closed")

// Options may be nil; zero fields take the defaults.
type Options struct {
	// Model is a name known to package modelfile: "use-lite" (default, works
	// offline) or "minilm-l6-v2".
	Model string
	// Threads is how many batches run at once (default 2), each on one
	// thread. On two cores, two single-threaded runs of one session embed
	// about a quarter more texts per second than one run on two threads,
	// whose pool idles between operators, and a query's one short text
	// takes less time on one thread (0.35 ms against 0.51 ms).
	Threads int
	// BatchSize is how many texts go through the model per run (default 4).
	// Larger batches are no faster on two cores but hold more activations:
	// USE-lite peaks near 180 MB at 16 texts of 128 tokens, 265 MB at 32 and
	// 435 MB at 64. Two runs of 4 at once peak as one run of 8 did (about
	// 117 MB), two of 8 about 150 MB, for the same texts per second.
	BatchSize int
	// LibraryPath is the ONNX Runtime shared library (default
	// <dir>/libonnxruntime.so.1). The first Open in a process loads it; later
	// Opens must name the same library.
	LibraryPath string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics, if set, records embedding counts and durations.
	Metrics *Metrics
}

// Model is one loaded model: its tokenizer and an ONNX Runtime session.
// It is safe for concurrent use. Runs share the session (its weights and
// its arena); each runs on one thread, and one Embed runs up to Threads of
// its batches at once.
type Model struct {
	spec      modelfile.Model
	encode    func(string) []int64
	batchSize int
	metrics   *Metrics

	inputs     []string // graph input names, in session order
	output     string
	tokenLevel bool // the output is [batch, len, dim] and needs mean pooling

	modelPath string
	threads   int
	checksum  string

	mu      sync.RWMutex // runs hold it to read; Trim and Close to swap or free session
	session *ort.DynamicAdvancedSession
}

// env is ONNX Runtime's environment. The library keeps it in process-global
// state (one OrtEnv per process, created by InitializeEnvironment and
// failing if called twice), so this package must mirror that with one
// guarded record of its own: which library was loaded. It is never torn
// down, because Models opened elsewhere in the process may still use it.
var env struct {
	sync.Mutex
	library string
}

func initEnvironment(library string) error {
	if abs, err := filepath.Abs(library); err == nil {
		library = abs
	}
	if _, err := os.Stat(library); err != nil {
		return fmt.Errorf("onnx runtime library: %w: %w; run `lorekeeper model fetch` (or set LOREKEEPER_MODEL_DIR to where it put the files)", ErrNotInstalled, err)
	}
	env.Lock()
	defer env.Unlock()
	if env.library != "" {
		if env.library != library {
			return fmt.Errorf("onnx runtime already loaded from %s, cannot also load %s", env.library, library)
		}
		return nil
	}
	if ort.IsInitialized() {
		// Another user of the binding in this process got there first.
		env.library = library
		return nil
	}
	ort.SetSharedLibraryPath(library)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("initialise onnx runtime from %s: %w", library, err)
	}
	env.library = library
	return nil
}

// Open loads the model named by opts from the model directory dir (the
// layout of package modelfile). A missing library or model file is an
// ErrNotInstalled error that says how to obtain it.
func Open(dir string, opts *Options) (*Model, error) {
	if opts == nil {
		opts = &Options{}
	}
	name := opts.Model
	if name == "" {
		name = DefaultModel
	}
	spec, err := modelfile.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("open model: %w", err)
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = DefaultThreads
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	library := opts.LibraryPath
	if library == "" {
		library = modelfile.LibraryPath(dir)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}

	modelPath := spec.ModelPath(dir)
	for _, p := range []string{modelPath, spec.VocabPath(dir)} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("open model %s: %w: %w; %s (or set LOREKEEPER_MODEL_DIR to the directory holding it)", name, ErrNotInstalled, err, spec.Obtain)
		}
	}
	encode, err := newEncoder(spec, dir)
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", name, err)
	}
	checksum, err := spec.Checksum(dir)
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", name, err)
	}
	if err := initEnvironment(library); err != nil {
		return nil, fmt.Errorf("open model %s: %w", name, err)
	}

	ins, outs, err := ort.GetInputOutputInfo(modelPath)
	if err != nil {
		return nil, fmt.Errorf("open model %s: read %s: %w", name, modelPath, err)
	}
	m := &Model{spec: spec, encode: encode, batchSize: batch, metrics: opts.Metrics}
	opts.Metrics.start(spec.Name)
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
			m.inputs = append(m.inputs, in.Name)
		default:
			return nil, fmt.Errorf("open model %s: unexpected input %q in %s", name, in.Name, modelPath)
		}
	}
	if !slices.Contains(m.inputs, "input_ids") {
		return nil, fmt.Errorf("open model %s: %s has no input_ids input", name, modelPath)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("open model %s: %s has no outputs", name, modelPath)
	}
	m.output = outs[0].Name
	switch len(outs[0].Dimensions) {
	case 2:
	case 3:
		m.tokenLevel = true
	default:
		return nil, fmt.Errorf("open model %s: output %q has shape %v, want [batch, dim] or [batch, len, dim]", name, m.output, outs[0].Dimensions)
	}
	if d := outs[0].Dimensions[len(outs[0].Dimensions)-1]; d != int64(spec.Dimensions) {
		return nil, fmt.Errorf("open model %s: output dimension %d, want %d", name, d, spec.Dimensions)
	}

	m.modelPath, m.threads, m.checksum = modelPath, threads, checksum
	if m.session, err = m.newSession(); err != nil {
		return nil, fmt.Errorf("open model %s: %w", name, err)
	}
	log.Info("embedding model loaded", "model", name, "dimensions", spec.Dimensions,
		"max_tokens", spec.MaxTokens, "threads", threads, "batch_size", batch, "path", modelPath)
	return m, nil
}

// newSession creates an ONNX Runtime session for the model.
func (m *Model) newSession() (*ort.DynamicAdvancedSession, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("set threads: %w", err)
	}
	// ONNX Runtime's CPU arena stays on: without it a short benchmark
	// keeps less (124 MB instead of 185 MB after USE-lite's batches), but a
	// node through its first load held more, 640 MB instead of 380 MB
	// after a minute, as malloc kept the freed activations of every thread.
	// Trim gives the arena back once the bulk of the work is done.
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("set threads: %w", err)
	}
	// Its threads do not spin waiting for work between operators: on two
	// cores the spinning took CPU from the Go work beside a load (NATS,
	// Badger, the collector). up's first load of the whole catalogue took
	// 49-51 s and 89-92 s of CPU instead of 57-60 s and 110-115 s.
	if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return nil, fmt.Errorf("set spinning: %w", err)
	}
	sess, err := ort.NewDynamicAdvancedSession(m.modelPath, m.inputs, []string{m.output}, so)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return sess, nil
}

// Trim releases the memory the session's arena grew to, which it keeps
// for the largest batch it ever ran (tens of megabytes after a bulk load,
// while a query embeds one short text): it replaces the session with a
// fresh one and returns the freed C heap to the operating system. Runs
// wait for the swap, not for the new session's creation.
func (m *Model) Trim() error {
	fresh, err := m.newSession()
	if err != nil {
		return fmt.Errorf("trim model %s: %w", m.spec.Name, err)
	}
	m.mu.Lock()
	old := m.session
	if old == nil {
		m.mu.Unlock()
		_ = fresh.Destroy()
		return ErrClosed
	}
	m.session = fresh
	m.mu.Unlock()
	if err := old.Destroy(); err != nil {
		return fmt.Errorf("trim model %s: %w", m.spec.Name, err)
	}
	releaseCHeap()
	return nil
}

func newEncoder(spec modelfile.Model, dir string) (func(string) []int64, error) {
	switch spec.Tokenizer {
	case modelfile.SentencePiece:
		tok, err := tokenize.LoadSentencePiece(spec.VocabPath(dir))
		if err != nil {
			return nil, err
		}
		return func(s string) []int64 {
			ids := tok.Encode(s)
			return ids[:min(len(ids), spec.MaxTokens)]
		}, nil
	case modelfile.WordPiece:
		tok, err := tokenize.LoadWordPiece(spec.VocabPath(dir), &tokenize.WordPieceOptions{MaxTokens: spec.MaxTokens})
		if err != nil {
			return nil, err
		}
		return tok.Encode, nil
	default:
		return nil, fmt.Errorf("tokenizer %q", spec.Tokenizer)
	}
}

// Checksum identifies the model's files (modelfile.Model.Checksum).
func (m *Model) Checksum() string { return m.checksum }

// Info describes the model.
func (m *Model) Info() embedder.ModelInfo {
	return embedder.ModelInfo{Name: m.spec.Name, Dimensions: m.spec.Dimensions, Lowercase: m.spec.Lowercase}
}

// Close releases the session. The model must not be used afterwards.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		return nil
	}
	err := m.session.Destroy()
	m.session = nil
	if err != nil {
		return fmt.Errorf("close model %s: %w", m.spec.Name, err)
	}
	return nil
}

// Embed returns one L2-normalised vector of Info().Dimensions per text, in
// order. Texts are used as given: lower-case them first when
// Info().Lowercase says so. Texts longer than the model reads are
// truncated. ctx is checked before each batch and also stops a batch in
// flight; its error is returned unwrapped.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tokens := make([][]int64, len(texts))
	for i, t := range texts {
		tokens[i] = m.encode(t)
	}
	// Batch texts of similar length together so little of each batch is
	// padding; results go back to the callers' order.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(tokens[a]) - len(tokens[b]) })

	var batches [][]int
	for start := 0; start < len(order); start += m.batchSize {
		batches = append(batches, order[start:min(start+m.batchSize, len(order))])
	}

	// Up to m.threads runs at once, each taking the next batch; the first
	// failure stops the others.
	out := make([][]float32, len(texts))
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan []int)
	var wg sync.WaitGroup
	for range min(m.threads, len(batches)) {
		wg.Go(func() {
			for idx := range next {
				if err := m.embedBatch(runCtx, tokens, idx, out); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, idx := range batches {
		select {
		case next <- idx:
		case <-runCtx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := context.Cause(runCtx); err != nil {
		return nil, err
	}
	return out, nil
}

// embedBatch embeds the texts idx names and puts their vectors in out.
func (m *Model) embedBatch(ctx context.Context, tokens [][]int64, idx []int, out [][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	batch := make([][]int64, len(idx))
	for i, j := range idx {
		batch[i] = tokens[j]
	}
	t0 := time.Now()
	vecs, ntok, err := m.run(ctx, batch)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("embed with %s: %w", m.spec.Name, err)
	}
	m.metrics.observe(m.spec.Name, len(idx), ntok, time.Since(t0))
	for i, j := range idx {
		out[j] = vecs[i]
	}
	return nil
}

// run embeds one batch and returns its vectors and its count of real tokens.
func (m *Model) run(ctx context.Context, batch [][]int64) ([][]float32, int, error) {
	seq := 1 // an all-empty batch still needs one (masked) position
	for _, ids := range batch {
		seq = max(seq, len(ids))
	}
	n := len(batch)
	ids := make([]int64, n*seq)
	mask := make([]int64, n*seq)
	ntok := 0
	for i, t := range batch {
		copy(ids[i*seq:], t)
		for j := range t {
			mask[i*seq+j] = 1
		}
		ntok += len(t)
	}
	shape := ort.NewShape(int64(n), int64(seq))
	inputs := make([]ort.Value, len(m.inputs))
	for i, name := range m.inputs {
		var data []int64
		switch name {
		case "input_ids":
			data = ids
		case "attention_mask":
			data = mask
		case "token_type_ids":
			data = make([]int64, n*seq)
		}
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, 0, fmt.Errorf("input tensor: %w", err)
		}
		defer t.Destroy()
		inputs[i] = t
	}
	outputs := []ort.Value{nil}

	runOpts, err := ort.NewRunOptions()
	if err != nil {
		return nil, 0, fmt.Errorf("run options: %w", err)
	}
	// Cancelling ctx terminates the run in flight, not only the next batch.
	// If the callback has started, wait for it before freeing runOpts.
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(terminated)
		_ = runOpts.Terminate()
	})
	defer func() {
		if !stop() {
			<-terminated
		}
		runOpts.Destroy()
	}()

	m.mu.RLock()
	if m.session == nil {
		m.mu.RUnlock()
		return nil, 0, ErrClosed
	}
	err = m.session.RunWithOptions(inputs, outputs, runOpts)
	m.mu.RUnlock()
	if err != nil {
		return nil, 0, fmt.Errorf("run: %w", err)
	}
	defer outputs[0].Destroy()
	out, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, 0, fmt.Errorf("output %q is %T, want float32 tensor", m.output, outputs[0])
	}
	data := out.GetData()
	dim := m.spec.Dimensions

	vecs := make([][]float32, n)
	for i := range n {
		v := make([]float32, dim)
		if m.tokenLevel {
			// Mean over the real tokens, as sentence-transformers pools.
			count := 0
			for j := range seq {
				if mask[i*seq+j] == 0 {
					continue
				}
				count++
				row := data[(i*seq+j)*dim : (i*seq+j+1)*dim]
				for k := range v {
					v[k] += row[k]
				}
			}
			for k := range v {
				v[k] /= float32(max(count, 1))
			}
		} else {
			copy(v, data[i*dim:(i+1)*dim])
		}
		normalize(v)
		vecs[i] = v
	}
	return vecs, ntok, nil
}

// normalize scales v to unit length (leaving a zero vector alone).
func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}

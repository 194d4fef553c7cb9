// Command bundlevectors makes the vectors the binary carries (package
// vectorbundle): the vector of every entity whose content is fixed when
// LoreKeeper is built, made by the model a start uses by default, and the
// list of those entities (what a first start loads, known before it
// does). `make
// vectors` runs it; run it again whenever those entities' texts, the text
// template (embedder.Text) or the model change, and commit the file.
//
// Vectors of texts the current bundle already holds, made by the same
// model, are kept as they are; only new texts are embedded, each on its
// own (no batch padding), so the file depends on the texts and the model
// alone and a rerun with nothing changed writes the same bytes.
//
//	bundlevectors [-model-dir DIR] [-model use-lite] [-out FILE]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorbundle"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// sources are the entities fixed at build time: each returns the entities
// a start publishes from content the binary carries. A new bundled source
// goes here.
var sources = []struct {
	name     string
	entities func(context.Context) ([]*lkv1.Entity, error)
}{
	{"the bundled Open5e snapshot", open5e.SnapshotEntities},
}

func main() {
	modelDir := os.Getenv("LOREKEEPER_MODEL_DIR")
	if modelDir == "" {
		modelDir = ".models"
	}
	flag.StringVar(&modelDir, "model-dir", modelDir, "the ONNX Runtime library and the models (LOREKEEPER_MODEL_DIR)")
	model := flag.String("model", onnx.DefaultModel, "the model whose vectors are bundled: the one a start uses by default")
	out := flag.String("out", filepath.Join("embedder", "vectorbundle", vectorbundle.BundledFile), "the bundle to write (its current content is reused)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, modelDir, *model, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bundlevectors:", err)
		os.Exit(1)
	}
}

// bundled is what a start stores and embeds of the sources' entities for
// the model: every entity, and each distinct text once, in the sources'
// order.
func bundled(ctx context.Context, model string, report func(source string, entities int)) ([]vectorbundle.Entry, []string, error) {
	spec, err := modelfile.Lookup(model)
	if err != nil {
		return nil, nil, err
	}
	var (
		entries []vectorbundle.Entry
		texts   []string
	)
	seen := map[vectorbundle.Hash]bool{}
	for _, s := range sources {
		es, err := s.entities(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.name, err)
		}
		for _, e := range es {
			entries = append(entries, vectorbundle.Entry{Key: e.GetKey(), Name: e.GetName()})
			t := embedder.Text(e, spec.Lowercase)
			if h := vectorbundle.TextHash(t); !seen[h] {
				seen[h] = true
				texts = append(texts, t)
			}
		}
		report(s.name, len(es))
	}
	return entries, texts, nil
}

func run(ctx context.Context, modelDir, name, out string) error {
	start := time.Now()
	entries, texts, err := bundled(ctx, name, func(source string, n int) { fmt.Printf("%s: %d entities\n", source, n) })
	if err != nil {
		return err
	}

	// Each text alone: a batch pads its texts to the longest, which moves
	// a vector's last bits with its neighbours.
	m, err := onnx.Open(modelDir, &onnx.Options{Model: name, BatchSize: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer func() { _ = m.Close() }()
	info := m.Info()
	bl := vectorbundle.NewBuilder(vectorbundle.Header{Model: info.Name, Checksum: m.Checksum(), Dimensions: info.Dimensions})
	bl.SetContents(entries)
	old, err := previous(out, info.Name, m.Checksum())
	if err != nil {
		return err
	}
	var todo []string
	for _, t := range texts {
		if old == nil || !bl.Keep(old, vectorbundle.TextHash(t)) {
			todo = append(todo, t)
		}
	}
	kept := len(texts) - len(todo)
	const batch = 256
	for i := 0; i < len(todo); i += batch {
		part := todo[i:min(i+batch, len(todo))]
		vecs, err := m.Embed(ctx, part)
		if err != nil {
			return err
		}
		for j, t := range part {
			if err := bl.Add(vectorbundle.TextHash(t), vecs[j]); err != nil {
				return err
			}
		}
		fmt.Printf("\rembedded %d of %d", i+len(part), len(todo))
	}
	if len(todo) > 0 {
		fmt.Println()
	}
	var buf bytes.Buffer
	if err := bl.Encode(&buf); err != nil {
		return err
	}
	if err := writeFile(out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Printf("%s: %d vectors of %s (%d kept, %d embedded), %d bytes, in %s\n",
		out, bl.Len(), info.Name, kept, len(todo), buf.Len(), time.Since(start).Round(time.Millisecond))
	return nil
}

// previous is the bundle at path if the same model made it, nil if there
// is none or another model's.
func previous(path, model, checksum string) (*vectorbundle.Bundle, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := vectorbundle.Decode(f)
	if err != nil {
		fmt.Printf("%s cannot be read (%v): making every vector again\n", path, err)
		return nil, nil
	}
	if ok, why := b.Matches(model, checksum); !ok {
		fmt.Printf("%s: making every vector again\n", why)
		return nil, nil
	}
	return b, nil
}

// writeFile writes beside path and renames, so an interrupted run never
// leaves a truncated bundle.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bundlevectors-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

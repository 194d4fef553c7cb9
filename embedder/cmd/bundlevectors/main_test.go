package main

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"testing"

	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorbundle"
)

// TestBundled_current: the vectors the binary carries are those of the
// model a start uses by default, for exactly the texts a start embeds of
// the bundled content, and equal the model's own vectors (to the stored
// precision) for a sample of them; its list of entities is the bundled
// content's. It fails after any change to those
// texts (the content, the text template) or to the model until the
// bundle is made again.
func TestBundled_current(t *testing.T) {
	dir := modeltest.Dir()
	b, err := vectorbundle.Bundled()
	if err != nil {
		t.Fatalf("the bundled vectors cannot be read: %v; run `make vectors`", err)
	}
	m, err := onnx.Open(dir, &onnx.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	info := m.Info()
	if ok, why := b.Matches(info.Name, m.Checksum()); !ok {
		t.Fatalf("%s: run `make vectors` and commit %s", why, vectorbundle.BundledFile)
	}
	entries, texts, err := bundled(context.Background(), info.Name, func(string, int) {})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(entries, b.Contents) {
		t.Fatalf("the bundled contents are stale: %d entities, the bundled content now has %d (or other keys or names). Run `make vectors` and commit %s",
			len(b.Contents), len(entries), vectorbundle.BundledFile)
	}
	var missing []string
	want := map[vectorbundle.Hash]bool{}
	for _, text := range texts {
		h := vectorbundle.TextHash(text)
		want[h] = true
		if _, ok := b.Step(h); !ok {
			missing = append(missing, text)
		}
	}
	extra := 0
	for _, h := range b.Hashes() {
		if !want[h] {
			extra++
		}
	}
	if len(missing) > 0 || extra > 0 {
		first := ""
		if len(missing) > 0 {
			first = "; the first text without one: " + missing[0][:min(len(missing[0]), 120)]
		}
		t.Fatalf("the bundled vectors are stale: %d of %d texts a start embeds have none, and %d vectors are of texts no longer embedded%s. Run `make vectors` and commit %s",
			len(missing), len(texts), extra, first, vectorbundle.BundledFile)
	}

	// A sample across the texts, embedded as a node embeds them (batched).
	var sample []string
	for i := 0; i < len(texts); i += max(1, len(texts)/64) {
		sample = append(sample, texts[i])
	}
	vecs, err := m.Embed(context.Background(), sample)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, text := range sample {
		h := vectorbundle.TextHash(text)
		got, _ := b.Lookup(h)
		step, _ := b.Step(h)
		var d float64
		for k := range got {
			d = max(d, math.Abs(float64(got[k]-vecs[i][k])))
		}
		c := cosine(got, vecs[i])
		worst = min(worst, c)
		if d > float64(step) || c < 0.9999 {
			t.Errorf("the bundled vector of %.60q is not the model's: a component %.4g off (a step is %.4g), cosine %.6f; run `make vectors`", text, d, step, c)
		}
	}
	t.Logf("%d bundled vectors (%d bytes compressed); a sample of %d against the model: lowest cosine %.6f", b.Len(), vectorbundle.BundledSize(), len(sample), worst)
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

package replica_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/replica"
	"lorekeeper.dev/embedder/vectorbundle"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// embeddedTexts is how many texts the model embedded, from its metric.
func embeddedTexts(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "lorekeeper_embedder_embedded_texts_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestReplica_BundledVectors: a replica whose model is the bundle's takes
// the bundled vectors of the texts it stores and embeds nothing; when the
// texts are not the bundle's (the text template changed since it was
// made) or the model's checksum is not its (another model, or the same
// converted otherwise), the model embeds every entity, as without a bundle.
func TestReplica_BundledVectors(t *testing.T) {
	es := firstEntities(t, 40)
	real, err := vectorbundle.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := modelfile.Lookup(onnx.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := spec.Checksum(modeltest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	// remade is a bundle of the real vectors of es, each under the hash of
	// text(e), recorded as made by a model with checksum.
	remade := func(checksum string, text func(*lkv1.Entity) string) func() (*vectorbundle.Bundle, error) {
		bl := vectorbundle.NewBuilder(vectorbundle.Header{Model: real.Model, Checksum: checksum, Dimensions: real.Dimensions})
		for _, e := range es {
			v, ok := real.Lookup(vectorbundle.TextHash(embedder.Text(e, spec.Lowercase)))
			if !ok {
				t.Fatalf("the bundled vectors lack %s: run make vectors", e.GetKey())
			}
			if err := bl.Add(vectorbundle.TextHash(text(e)), v); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := bl.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		return func() (*vectorbundle.Bundle, error) { return vectorbundle.Decode(bytes.NewReader(buf.Bytes())) }
	}
	text := func(e *lkv1.Entity) string { return embedder.Text(e, spec.Lowercase) }
	cases := []struct {
		name     string
		bundle   func() (*vectorbundle.Bundle, error)
		embedded int // texts the model embeds
	}{
		{"the bundle's model and texts", remade(sum, text), 0},
		{"the text template changed", remade(sum, func(e *lkv1.Entity) string { return text(e) + " (as an older template wrote it)" }), len(es)},
		{"another model checksum", remade("0"+sum[1:], text), len(es)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			publish(t, js, es)
			reg := prometheus.NewRegistry()
			r := start(t, js, filepath.Join(t.TempDir(), "badger"), &replica.Options{
				ModelDir: modeltest.Dir(), Stream: ingest.StreamName, MaxPending: 1000, Bundle: c.bundle, Registerer: reg,
			})
			r.waitReady(t)
			r.holds(t, es)
			if got := embeddedTexts(t, reg); got != float64(c.embedded) {
				t.Errorf("the model embedded %v texts, want %d", got, c.embedded)
			}
			// Whichever made them, the stored vectors are the model's (to
			// the bundle's precision, as the index scores within 2e-3).
			for _, e := range es {
				want, _ := real.Lookup(vectorbundle.TextHash(text(e)))
				got, err := r.Store().VectorIndex().Scores(t.Context(), want, []string{e.GetKey()}, nil)
				if err != nil || got[0] < 0.998 {
					t.Errorf("%s: stored vector's cosine with the model's %v (%v)", e.GetKey(), got, err)
				}
			}
		})
	}
}

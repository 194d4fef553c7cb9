package onnxgraph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// BERTConfig is the shape of a BERT encoder.
type BERTConfig struct {
	Vocab, MaxPositions, TypeVocab int64
	Hidden, Layers, Heads          int64
	Intermediate                   int64
}

// MiniLML6V2 is the shape of sentence-transformers/all-MiniLM-L6-v2.
func MiniLML6V2() BERTConfig {
	return BERTConfig{Vocab: 30522, MaxPositions: 512, TypeVocab: 2, Hidden: 384, Layers: 6, Heads: 12, Intermediate: 1536}
}

// RandomBERT builds a BERT encoder of shape c with random weights drawn
// from seed: inputs input_ids, attention_mask and token_type_ids [batch,
// sequence] (int64), output last_hidden_state [batch, sequence, hidden],
// the interface of the ONNX exports of sentence-transformers models. It lets
// the project test loading, batching and pooling of a model it cannot
// download, with the same shapes and therefore the same cost.
func RandomBERT(c BERTConfig, seed uint64) *Graph {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	normal := func(n int64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.02)
		}
		return v
	}
	fill := func(n int64, x float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = x
		}
		return v
	}
	g := New("bert-random")
	g.Metadata("source", fmt.Sprintf("random weights, seed %d, shape %+v", seed, c))
	h := c.Hidden
	ids := g.Input("input_ids", Int64, "batch", "sequence")
	mask := g.Input("attention_mask", Int64, "batch", "sequence")
	types := g.Input("token_type_ids", Int64, "batch", "sequence")

	word := g.Node("Gather", []string{g.FloatTensor("embeddings/word", normal(c.Vocab*h), c.Vocab, h), ids})
	seqLen := g.Node("Shape", []string{ids}, Int("start", 1), Int("end", 2))
	pos := g.Node("Slice", []string{g.FloatTensor("embeddings/position", normal(c.MaxPositions*h), c.MaxPositions, h), g.Int64s(0), seqLen, g.Int64s(0)})
	typ := g.Node("Gather", []string{g.FloatTensor("embeddings/type", normal(c.TypeVocab*h), c.TypeVocab, h), types})
	ln := func(name string, x string) string {
		return g.LayerNorm(x, g.FloatTensor(name+"/gamma", fill(h, 1), h), g.FloatTensor(name+"/beta", fill(h, 0), h), 1e-12)
	}
	x := ln("embeddings/ln", g.Node("Add", []string{g.Node("Add", []string{word, pos}), typ}))

	bias := g.MaskBias(mask, -10000)
	headDim := h / c.Heads
	scale := float32(1 / math.Sqrt(float64(headDim)))
	for l := range c.Layers {
		p := fmt.Sprintf("layer%d/", l)
		dense := func(name string, x string, in, out int64) string {
			return g.Dense(x, g.FloatTensor(p+name+"/kernel", normal(in*out), in, out), g.FloatTensor(p+name+"/bias", fill(out, 0), out))
		}
		q, k, v := dense("query", x, h, h), dense("key", x, h, h), dense("value", x, h, h)
		attn := dense("attention_output", g.MultiHeadAttention(q, k, v, bias, c.Heads, headDim, scale), h, h)
		x = ln(p+"attention_ln", g.Node("Add", []string{x, attn}))
		inter := dense("intermediate", x, h, c.Intermediate)
		// GELU, exact: x·½(1 + erf(x/√2)).
		erf := g.Node("Erf", []string{g.Node("Div", []string{inter, g.Scalar(float32(math.Sqrt2))})})
		gelu := g.Node("Mul", []string{g.Node("Mul", []string{inter, g.Scalar(0.5)}), g.Node("Add", []string{erf, g.Scalar(1)})})
		x = ln(p+"output_ln", g.Node("Add", []string{x, dense("output", gelu, c.Intermediate, h)}))
	}
	g.NodeOut("Identity", []string{x}, []string{"last_hidden_state"})
	g.Output("last_hidden_state", Float, "batch", "sequence", h)
	return g
}

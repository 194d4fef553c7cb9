package onnxgraph

import "math"

// Op helpers shared by the converters: each adds the nodes of one common
// construct and returns the name of its result.

// Dense is x·w + b for a weight w of shape [in, out] and bias b of [out].
func (g *Graph) Dense(x, w, b string) string {
	return g.Node("Add", []string{g.Node("MatMul", []string{x, w}), b})
}

// LayerNorm normalises over the last axis with ONNX's LayerNormalization.
func (g *Graph) LayerNorm(x, scale, bias string, eps float32) string {
	return g.Node("LayerNormalization", []string{x, scale, bias}, Int("axis", -1), Float32("epsilon", eps))
}

// MultiHeadAttention is softmax(q·kᵀ·scale + maskBias)·v over heads, for
// q, k, v of shape [batch, len, heads*headDim] and a maskBias broadcastable
// to [batch, heads, len, len]. The result has shape [batch, len, heads*headDim].
func (g *Graph) MultiHeadAttention(q, k, v, maskBias string, heads, headDim int64, scale float32) string {
	split := g.Int64s(0, 0, heads, headDim)
	qh := g.Node("Transpose", []string{g.Node("Reshape", []string{q, split})}, Ints("perm", 0, 2, 1, 3))
	kh := g.Node("Transpose", []string{g.Node("Reshape", []string{k, split})}, Ints("perm", 0, 2, 3, 1))
	vh := g.Node("Transpose", []string{g.Node("Reshape", []string{v, split})}, Ints("perm", 0, 2, 1, 3))
	qh = g.Node("Mul", []string{qh, g.Scalar(scale)})
	scores := g.Node("Add", []string{g.Node("MatMul", []string{qh, kh}), maskBias})
	weights := g.Node("Softmax", []string{scores}, Int("axis", -1))
	ctx := g.Node("Transpose", []string{g.Node("MatMul", []string{weights, vh})}, Ints("perm", 0, 2, 1, 3))
	return g.Node("Reshape", []string{ctx, g.Int64s(0, 0, heads*headDim)})
}

// MaskBias turns an int64 attention mask [batch, len] (1 = token, 0 =
// padding) into an additive bias [batch, 1, 1, len]: 0 for tokens and
// negative for padding, so padded keys get no attention weight.
func (g *Graph) MaskBias(mask string, negative float32) string {
	m := g.Node("Cast", []string{mask}, Int("to", Float))
	inv := g.Node("Sub", []string{g.Scalar(1), m})
	bias := g.Node("Mul", []string{inv, g.Scalar(negative)})
	return g.Node("Unsqueeze", []string{bias, g.Int64s(1, 2)})
}

// DenseInt8 is Dense with w stored as int8, one scale per output column,
// and x quantized row by row (each position of each text on its own,
// symmetric around 128 in uint8) for an integer MatMulInteger. Per-tensor
// dynamic quantization (DynamicQuantizeLinear) would make a text's vector
// depend on the other texts in its batch; per row, a text embeds the same
// alone or batched. For USE-lite the vectors stay within cosine 0.999 of
// the float32 model's, and a short query runs in a quarter of the CPU.
func (g *Graph) DenseInt8(x string, w []float32, in, out int64, b string) string {
	q := make([]int8, len(w))
	scales := make([]float32, out)
	for c := range out {
		var m float64
		for r := range in {
			m = math.Max(m, math.Abs(float64(w[r*out+c])))
		}
		s := m / 127
		if s == 0 {
			s = 1
		}
		scales[c] = float32(s)
		for r := range in {
			q[r*out+c] = int8(math.Round(float64(w[r*out+c]) / s))
		}
	}
	wq := g.Int8Tensor(g.Tmp("wq"), q, in, out)
	ws := g.FloatTensor(g.Tmp("ws"), scales, out)
	x2 := g.Node("Reshape", []string{x, g.Int64s(-1, in)})                                                  // [M, in]
	amax := g.Node("ReduceMax", []string{g.Node("Abs", []string{x2})}, Ints("axes", 1), Int("keepdims", 1)) // [M, 1]
	scale := g.Node("Div", []string{g.Node("Max", []string{amax, g.Scalar(1e-12)}), g.Scalar(127)})         // [M, 1]
	scaleM := g.Node("Reshape", []string{scale, g.Int64s(-1)})                                              // [M]
	// QuantizeLinear wants a zero point per row beside the scale per row;
	// MatMulInteger takes one zero point for all of them.
	zpM := g.Node("Cast", []string{g.Node("Add", []string{g.Node("Mul", []string{scaleM, g.Scalar(0)}), g.Scalar(128)})}, Int("to", Uint8))
	xq := g.Node("QuantizeLinear", []string{x2, scaleM, zpM}, Int("axis", 0))
	zp := g.Node("Cast", []string{g.Scalar(128)}, Int("to", Uint8))
	y := g.Node("MatMulInteger", []string{xq, wq, zp}) // [M, out] int32
	yf := g.Node("Mul", []string{g.Node("Mul", []string{g.Node("Cast", []string{y}, Int("to", Float)), scale}), ws})
	shape := g.Node("Concat", []string{g.Node("Shape", []string{x}, Int("start", 0), Int("end", -1)), g.Int64s(out)}, Int("axis", 0))
	return g.Node("Add", []string{g.Node("Reshape", []string{yf, shape}), b})
}

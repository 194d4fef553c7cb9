package onnxgraph

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

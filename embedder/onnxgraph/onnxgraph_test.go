package onnxgraph_test

import (
	"math"
	"math/rand/v2"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/onnxgraph"
)

// initRuntime loads ONNX Runtime from the model directory `make model`
// fills; the test fails, naming `make model`, without it.
func initRuntime(t *testing.T) {
	t.Helper()
	dir := modeltest.Dir()
	lib := modelfile.LibraryPath(dir)
	modeltest.Need(t, lib)
	if ort.IsInitialized() {
		return
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(); err != nil {
		t.Fatal(err)
	}
}

// TestGraph_ops runs the helpers' graphs in ONNX Runtime and checks them
// against direct computation: attention with a padding mask, a dense layer
// and layer normalisation.
func TestGraph_ops(t *testing.T) {
	initRuntime(t)
	const (
		batch, seq, heads, headDim = 2, 3, 2, 2
		width                      = heads * headDim
		scale                      = 0.7
	)
	r := rand.New(rand.NewPCG(1, 2))
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	q, k, v := randn(batch*seq*width), randn(batch*seq*width), randn(batch*seq*width)
	mask := []int64{1, 1, 1, 1, 1, 0}
	w, bias := randn(width*3), randn(3)
	gamma, beta := randn(width), randn(width)

	g := onnxgraph.New("ops")
	g.Input("q", onnxgraph.Float, "b", "s", int64(width))
	g.Input("k", onnxgraph.Float, "b", "s", int64(width))
	g.Input("v", onnxgraph.Float, "b", "s", int64(width))
	g.Input("mask", onnxgraph.Int64, "b", "s")
	attn := g.MultiHeadAttention("q", "k", "v", g.MaskBias("mask", -1e9), heads, headDim, scale)
	g.NodeOut("Identity", []string{attn}, []string{"attention"})
	g.Output("attention", onnxgraph.Float, "b", "s", int64(width))
	dense := g.Dense("q", g.FloatTensor("w", w, width, 3), g.FloatTensor("bias", bias, 3))
	g.NodeOut("Identity", []string{dense}, []string{"dense"})
	g.Output("dense", onnxgraph.Float, "b", "s", int64(3))
	ln := g.LayerNorm("q", g.FloatTensor("gamma", gamma, width), g.FloatTensor("beta", beta, width), 1e-6)
	g.NodeOut("Identity", []string{ln}, []string{"ln"})
	g.Output("ln", onnxgraph.Float, "b", "s", int64(width))

	session, err := ort.NewDynamicAdvancedSessionWithONNXData(g.Marshal("test"), []string{"q", "k", "v", "mask"}, []string{"attention", "dense", "ln"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Destroy()
	shape := ort.NewShape(batch, seq, width)
	var inputs []ort.Value
	for _, data := range [][]float32{q, k, v} {
		tensor, err := ort.NewTensor(shape, data)
		if err != nil {
			t.Fatal(err)
		}
		defer tensor.Destroy()
		inputs = append(inputs, tensor)
	}
	maskT, err := ort.NewTensor(ort.NewShape(batch, seq), mask)
	if err != nil {
		t.Fatal(err)
	}
	defer maskT.Destroy()
	inputs = append(inputs, maskT)
	outputs := []ort.Value{nil, nil, nil}
	if err := session.Run(inputs, outputs); err != nil {
		t.Fatal(err)
	}
	for _, o := range outputs {
		defer o.Destroy()
	}
	got := func(i int) []float32 { return outputs[i].(*ort.Tensor[float32]).GetData() }

	// Attention, directly.
	at := func(x []float32, b, s, h, d int) float64 { return float64(x[(b*seq+s)*width+h*headDim+d]) }
	var wantAttn []float64
	for b := range batch {
		for i := range seq {
			row := make([]float64, width)
			for h := range heads {
				scores := make([]float64, seq)
				var maxScore, sum float64 = math.Inf(-1), 0
				for j := range seq {
					for d := range headDim {
						scores[j] += at(q, b, i, h, d) * scale * at(k, b, j, h, d)
					}
					if mask[b*seq+j] == 0 {
						scores[j] = math.Inf(-1)
					}
					maxScore = math.Max(maxScore, scores[j])
				}
				for j := range scores {
					scores[j] = math.Exp(scores[j] - maxScore)
					sum += scores[j]
				}
				for j := range seq {
					for d := range headDim {
						row[h*headDim+d] += scores[j] / sum * at(v, b, j, h, d)
					}
				}
			}
			wantAttn = append(wantAttn, row...)
		}
	}
	var wantDense, wantLN []float64
	for p := range batch * seq {
		x := q[p*width : (p+1)*width]
		for o := range 3 {
			s := float64(bias[o])
			for i := range width {
				s += float64(x[i]) * float64(w[i*3+o])
			}
			wantDense = append(wantDense, s)
		}
		var mean, variance float64
		for _, xi := range x {
			mean += float64(xi) / width
		}
		for _, xi := range x {
			variance += (float64(xi) - mean) * (float64(xi) - mean) / width
		}
		for i, xi := range x {
			wantLN = append(wantLN, (float64(xi)-mean)/math.Sqrt(variance+1e-6)*float64(gamma[i])+float64(beta[i]))
		}
	}
	for i, c := range []struct {
		name string
		want []float64
	}{{"attention", wantAttn}, {"dense", wantDense}, {"ln", wantLN}} {
		out := got(i)
		if len(out) != len(c.want) {
			t.Fatalf("%s: %d values, want %d", c.name, len(out), len(c.want))
		}
		for j := range out {
			if math.Abs(float64(out[j])-c.want[j]) > 1e-4 {
				t.Errorf("%s[%d] = %v, want %v", c.name, j, out[j], c.want[j])
			}
		}
	}
}

func TestGraph_FloatTensor_panicsOnShape(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for 3 values of shape [2 2]")
		}
	}()
	onnxgraph.New("x").FloatTensor("w", []float32{1, 2, 3}, 2, 2)
}

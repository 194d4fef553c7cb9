package embeddedindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkDot512(b *testing.B) {
	x := make([]int16, 512)
	y := make([]int16, 512)
	for i := range x {
		x[i], y[i] = int16(i%7*1000), int16(i%5*1000)
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			dotInt16(x, y)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			dotInt16Generic(x, y)
		}
	})
	x8 := make([]int8, len(x))
	for i := range x8 {
		x8[i] = int8(i%7*10 - 30)
	}
	b.Run("kernel8", func(b *testing.B) {
		for b.Loop() {
			dotInt8(x8, y)
		}
	})
}

// TestDotInt8 checks the 8-bit kernel in use against the generic one and
// the exact sum (full-scale 8-bit lanes times 16-bit ones stay inside
// int32 for these lengths), for every length class.
func TestDotInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for n := 0; n <= 200; n++ {
		a := make([]int8, n)
		b := make([]int16, n+5) // longer b: only b[:len(a)] counts
		for i := range b {
			b[i] = int16(r.IntN(2*fixedOne+1) - fixedOne)
		}
		var want int64
		for i := range a {
			a[i] = int8(r.IntN(256) - 128)
			want += int64(a[i]) * int64(b[i])
		}
		if got, gen := dotInt8(a, b), dotInt8Generic(a, b); got != gen || int64(got) != want {
			t.Errorf("dotInt8(n=%d) = %d, generic %d, exact %d", n, got, gen, want)
		}
	}
}

// TestQuantize8 checks 8-bit rows' scores against the float64 cosine:
// each within the rounding's bound (half a step of the row's scale per
// component, times the query's 1-norm), and rounded, not truncated: over
// many pairs the error's RMS is near a uniform rounding error's, step/√12
// (truncating doubles it).
func TestQuantize8(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, dims := range []int{256, 384, 512, 768} {
		var sq, steps float64
		const pairs = 400
		for range pairs {
			u, v := unit(r, dims), unit(r, dims)
			row := make([]int8, dims)
			scale := quantize8(row, u)
			q := make([]int16, dims)
			quantize(q, v)
			var cos, norm1, big float64
			for i := range u {
				cos += float64(u[i]) * float64(v[i])
				norm1 += math.Abs(float64(v[i]))
				big = max(big, math.Abs(float64(u[i])))
			}
			got := float64(float32(dotInt8(row, q)) * scale)
			step := big / 127
			if bound := step/2*norm1 + math.Sqrt(float64(dims))/fixedOne; math.Abs(got-cos) > bound {
				t.Errorf("dims %d: 8-bit score %v, cosine %v: off by more than %v", dims, got, cos, bound)
			}
			sq += (got - cos) * (got - cos)
			steps += step
		}
		rms, want := math.Sqrt(sq/pairs), steps/pairs/math.Sqrt(12)
		if rms > 1.25*want {
			t.Errorf("dims %d: RMS error %.2g, want about %.2g (a rounding's)", dims, rms, want)
		}
	}
	row := []int8{5, 5}
	if s := quantize8(row, []float32{0, 0}); s != 0 || row[0] != 0 || row[1] != 0 {
		t.Errorf("zero vector: scale %v, row %v; want 0 and zeros", s, row)
	}
}

// TestDotInt16 checks the 16-bit kernel in use against the generic one,
// which must agree to the bit (integer sums are exact), for every length
// class, and the fixed-point score of unit vectors against their float64
// cosine within the bound Scores documents.
func TestDotInt16(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for n := 0; n <= 200; n++ {
		a := make([]int16, n)
		b := make([]int16, n+5) // longer b: only b[:len(a)] counts
		for i := range b {
			b[i] = int16(r.IntN(2*fixedOne+1) - fixedOne)
		}
		for i := range a {
			a[i] = int16(r.IntN(2*fixedOne+1) - fixedOne)
		}
		var want int64
		for i := range a {
			want += int64(a[i]) * int64(b[i])
		}
		// Random full-scale lanes can overflow int32 past two dozen
		// products; the wrapped sum is still the same in both kernels.
		if got, gen := dotInt16(a, b), dotInt16Generic(a, b); got != gen || (n <= 2 && int64(got) != want) {
			t.Errorf("dotInt16(n=%d) = %d, generic %d, exact %d", n, got, gen, want)
		}
	}
	t.Logf("AVX2 kernel in use: %v", useAVX2)
	for _, dims := range []int{2, 8, 384, 512, 768} {
		for range 50 {
			u, v := unit(r, dims), unit(r, dims)
			var cos float64
			for i := range u {
				cos += float64(u[i]) * float64(v[i])
			}
			qu, qv := make([]int16, dims), make([]int16, dims)
			quantize(qu, u)
			quantize(qv, v)
			got := float64(dotInt16(qu, qv)) / (fixedOne * fixedOne)
			if bound := math.Sqrt(float64(dims)) / fixedOne; math.Abs(got-cos) > bound {
				t.Errorf("dims %d: fixed-point score %v, cosine %v: off by more than %v", dims, got, cos, bound)
			}
			if dims >= 384 && math.Abs(got-cos) > 1e-4 {
				t.Errorf("dims %d: fixed-point score %v, cosine %v: off by more than 1e-4", dims, got, cos)
			}
		}
	}
}

func unit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}

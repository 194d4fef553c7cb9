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

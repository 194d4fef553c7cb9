package embeddedindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDot checks the kernel in use (assembly on amd64 with AVX2/FMA) against
// a float64 sum for every length class: the 32-wide loop, the 8-wide loop
// and the scalar tail, and their combinations.
func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for n := 0; n <= 130; n++ {
		a := make([]float32, n)
		b := make([]float32, n+3) // longer b: only b[:len(a)] counts
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		for name, got := range map[string]float32{"dot": dot(a, b), "dotGeneric": dotGeneric(a, b)} {
			if math.Abs(float64(got)-want) > 1e-4*math.Max(1, math.Sqrt(float64(n))) {
				t.Errorf("%s(n=%d) = %v, want %v", name, n, got, want)
			}
		}
	}
	t.Logf("AVX2/FMA kernel in use: %v", useAVX2)
}

func BenchmarkDot512(b *testing.B) {
	x := make([]float32, 512)
	y := make([]float32, 512)
	for i := range x {
		x[i], y[i] = float32(i%7), float32(i%5)
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			dot(x, y)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			dotGeneric(x, y)
		}
	})
}

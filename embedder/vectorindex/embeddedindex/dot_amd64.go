package embeddedindex

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2/FMA kernels: eight float lanes (sixteen 16-bit
// ones) and four accumulators make a 512-dim dot product several times
// faster than the scalar loop the compiler emits.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func dotInt16AVX2(a, b *int16, n int) int32

// dot is the inner product of a and b[:len(a)].
func dot(a, b []float32) float32 {
	if !useAVX2 || len(a) == 0 {
		return dotGeneric(a, b)
	}
	b = b[:len(a)]
	return dotAVX2(&a[0], &b[0], len(a))
}

// dotInt16 is the inner product of a and b[:len(a)] in 32-bit integers.
func dotInt16(a, b []int16) int32 {
	if !useAVX2 || len(a) == 0 {
		return dotInt16Generic(a, b)
	}
	b = b[:len(a)]
	return dotInt16AVX2(&a[0], &b[0], len(a))
}

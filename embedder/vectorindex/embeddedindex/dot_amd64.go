package embeddedindex

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels: sixteen 16-bit lanes and four
// accumulators make a 512-dim dot product several times faster than the
// scalar loop the compiler emits.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotInt16AVX2(a, b *int16, n int) int32

//go:noescape
func dotInt8AVX2(a *int8, b *int16, n int) int32

// dotInt16 is the inner product of a and b[:len(a)] in 32-bit integers.
func dotInt16(a, b []int16) int32 {
	if !useAVX2 || len(a) == 0 {
		return dotInt16Generic(a, b)
	}
	b = b[:len(a)]
	return dotInt16AVX2(&a[0], &b[0], len(a))
}

// dotInt8 is the inner product of a and b[:len(a)] in 32-bit integers.
func dotInt8(a []int8, b []int16) int32 {
	if !useAVX2 || len(a) == 0 {
		return dotInt8Generic(a, b)
	}
	b = b[:len(a)]
	return dotInt8AVX2(&a[0], &b[0], len(a))
}

package embeddedindex

import "math"

// dotInt16Generic is dotInt16's reference, and its kernel on other
// architectures. Integer sums are exact, so it and the assembly agree to
// the bit.
func dotInt16Generic(a, b []int16) int32 { return dotGeneric(a, b) }

// dotInt8Generic is dotInt8's reference, and its kernel on other
// architectures; it and the assembly agree to the bit.
func dotInt8Generic(a []int8, b []int16) int32 { return dotGeneric(a, b) }

// dotGeneric is the inner product of a and b[:len(a)] in 32-bit integers,
// four sums at a time.
func dotGeneric[T int8 | int16](a []T, b []int16) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa := a[i : i+4 : i+4]
		bb := b[i : i+4 : i+4]
		s0 += int32(aa[0]) * int32(bb[0])
		s1 += int32(aa[1]) * int32(bb[1])
		s2 += int32(aa[2]) * int32(bb[2])
		s3 += int32(aa[3]) * int32(bb[3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// fixedOne is 1.0 in the 16-bit fixed point the index keeps unit vectors
// in: half the bytes of float32, and scoring is bound by memory bandwidth. A product of two such vectors is at most fixedOne² (plus the
// rounding's share), well inside int32 however the sum is split.
const fixedOne = 32767

// quantize writes the fixed-point copy of the unit vector v into dst.
func quantize(dst []int16, v []float32) {
	for i, c := range v {
		dst[i] = int16(math.Round(float64(max(-1, min(1, c))) * fixedOne))
	}
}

// quantize8 writes v scaled so that its largest component is ±127 into
// dst, and returns what turns a dot product of dst with a fixed-point
// (fixedOne) query back into a cosine. A zero vector scores 0.
func quantize8(dst []int8, v []float32) float32 {
	var big float64
	for _, c := range v {
		big = max(big, math.Abs(float64(c)))
	}
	if big == 0 || math.IsNaN(big) || math.IsInf(big, 0) {
		clear(dst)
		return 0
	}
	s := 127 / big
	for i, c := range v {
		dst[i] = int8(math.Round(float64(c) * s))
	}
	return float32(big / (127 * fixedOne))
}

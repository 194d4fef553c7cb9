//go:build !amd64

package embeddedindex

// useAVX2 is false: only amd64 has the assembly kernels.
const useAVX2 = false

// dotInt16 is the inner product of a and b[:len(a)] in 32-bit integers.
func dotInt16(a, b []int16) int32 { return dotInt16Generic(a, b) }

// dotInt8 is the inner product of a and b[:len(a)] in 32-bit integers.
func dotInt8(a []int8, b []int16) int32 { return dotInt8Generic(a, b) }

//go:build !amd64

package embeddedindex

// useAVX2 is false: only amd64 has the assembly kernel.
const useAVX2 = false

// dot is the inner product of a and b[:len(a)].
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

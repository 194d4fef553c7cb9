//go:build linux && cgo

package onnx

// #include <malloc.h>
import "C"

// releaseCHeap returns glibc's free heap memory to the operating system:
// malloc keeps what ONNX Runtime frees for reuse otherwise.
func releaseCHeap() { C.malloc_trim(0) }

//go:build !linux || !cgo

package onnx

// releaseCHeap does nothing where the C library is not glibc's.
func releaseCHeap() {}

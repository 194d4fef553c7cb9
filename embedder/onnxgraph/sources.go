package onnxgraph

import "embed"

// Sources holds this package's Go files, so that a converter built on it
// can name the exact code that produced a model (see usetoonnx.ConverterID).
//
//go:embed *.go
var Sources embed.FS

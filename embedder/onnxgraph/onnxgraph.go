// Package onnxgraph builds ONNX models in memory and serialises them. It
// provides only the part of the ONNX schema (onnx.proto, IR version 8,
// opset 17) that the project's converters need: nodes with int, float and
// int list attributes, float32 and int64 initializers, and graph inputs and
// outputs with symbolic dimensions. Writing the protobuf wire format by hand
// with protowire keeps the project free of a generated ONNX package and of
// Python.
package onnxgraph

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Element types (onnx.proto TensorProto.DataType).
const (
	Float = 1
	Uint8 = 2
	Int8  = 3
	Int32 = 6
	Int64 = 7
)

// IRVersion and Opset are what every model written here declares; ONNX
// Runtime 1.24 reads both.
const (
	IRVersion = 8
	Opset     = 17
)

// Graph is an ONNX graph under construction. Names given to Node must be
// unique; Tmp makes unique intermediate names.
type Graph struct {
	name    string
	nodes   []node
	inits   []tensor
	inputs  []valueInfo
	outputs []valueInfo
	seq     int
	props   [][2]string
}

type node struct {
	op      string
	name    string
	inputs  []string
	outputs []string
	attrs   []Attr
}

type tensor struct {
	name  string
	dims  []int64
	dtype int32
	raw   []byte
}

type valueInfo struct {
	name  string
	dtype int32
	dims  []any // int64 or string (a symbolic dimension)
}

// Attr is one node attribute; make them with Int, Float and Ints.
type Attr struct {
	name string
	kind int32 // onnx.proto AttributeProto.AttributeType
	i    int64
	f    float32
	ints []int64
}

// Int is an INT attribute.
func Int(name string, v int64) Attr { return Attr{name: name, kind: 2, i: v} }

// Float32 is a FLOAT attribute.
func Float32(name string, v float32) Attr { return Attr{name: name, kind: 1, f: v} }

// Ints is an INTS attribute.
func Ints(name string, v ...int64) Attr { return Attr{name: name, kind: 7, ints: v} }

// New starts an empty graph.
func New(name string) *Graph { return &Graph{name: name} }

// Input declares a graph input. Each dim is an int64 (fixed) or a string
// (symbolic, such as "batch").
func (g *Graph) Input(name string, dtype int32, dims ...any) string {
	g.inputs = append(g.inputs, valueInfo{name: name, dtype: dtype, dims: dims})
	return name
}

// Output declares a graph output produced by some node.
func (g *Graph) Output(name string, dtype int32, dims ...any) {
	g.outputs = append(g.outputs, valueInfo{name: name, dtype: dtype, dims: dims})
}

// Metadata adds a key/value pair to the model's metadata_props.
func (g *Graph) Metadata(key, value string) { g.props = append(g.props, [2]string{key, value}) }

// Tmp returns a fresh intermediate name derived from prefix.
func (g *Graph) Tmp(prefix string) string {
	g.seq++
	return fmt.Sprintf("%s_%d", prefix, g.seq)
}

// Node adds a node with one output named after op and returns that name.
func (g *Graph) Node(op string, inputs []string, attrs ...Attr) string {
	out := g.Tmp(op)
	g.nodes = append(g.nodes, node{op: op, name: out, inputs: inputs, outputs: []string{out}, attrs: attrs})
	return out
}

// NodeOut adds a node whose outputs are named by the caller (for graph
// outputs and multi-output ops such as Split).
func (g *Graph) NodeOut(op string, inputs, outputs []string, attrs ...Attr) {
	g.nodes = append(g.nodes, node{op: op, name: g.Tmp(op), inputs: inputs, outputs: outputs, attrs: attrs})
}

// FloatTensor adds a float32 initializer and returns its name.
func (g *Graph) FloatTensor(name string, data []float32, dims ...int64) string {
	if n := product(dims); n != len(data) {
		panic(fmt.Sprintf("onnxgraph: initializer %s: %d values for shape %v", name, len(data), dims))
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	g.inits = append(g.inits, tensor{name: name, dims: dims, dtype: Float, raw: raw})
	return name
}

// Int8Tensor adds an int8 initializer and returns its name.
func (g *Graph) Int8Tensor(name string, data []int8, dims ...int64) string {
	if n := product(dims); n != len(data) {
		panic(fmt.Sprintf("onnxgraph: initializer %s: %d values for shape %v", name, len(data), dims))
	}
	raw := make([]byte, len(data))
	for i, v := range data {
		raw[i] = byte(v)
	}
	g.inits = append(g.inits, tensor{name: name, dims: dims, dtype: Int8, raw: raw})
	return name
}

// Int64Tensor adds an int64 initializer and returns its name.
func (g *Graph) Int64Tensor(name string, data []int64, dims ...int64) string {
	if n := product(dims); n != len(data) {
		panic(fmt.Sprintf("onnxgraph: initializer %s: %d values for shape %v", name, len(data), dims))
	}
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	g.inits = append(g.inits, tensor{name: name, dims: dims, dtype: Int64, raw: raw})
	return name
}

// Scalar adds a float32 scalar initializer with a fresh name.
func (g *Graph) Scalar(v float32) string { return g.FloatTensor(g.Tmp("scalar"), []float32{v}) }

// Int64s adds a 1-D int64 initializer with a fresh name (shapes, axes).
func (g *Graph) Int64s(v ...int64) string {
	return g.Int64Tensor(g.Tmp("ints"), v, int64(len(v)))
}

func product(dims []int64) int {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	return n
}

// Marshal serialises the graph as an ONNX ModelProto. Initializer data,
// most of a model's bytes, is copied once, into the result.
func (g *Graph) Marshal(producer string) []byte {
	var pieces [][]byte // the GraphProto's bytes, in order
	graphLen := 0
	add := func(b []byte) {
		pieces = append(pieces, b)
		graphLen += len(b)
	}
	// field adds a length-delimited field whose body is the parts in order.
	field := func(num protowire.Number, parts ...[]byte) {
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		hdr := protowire.AppendTag(nil, num, protowire.BytesType)
		add(protowire.AppendVarint(hdr, uint64(n)))
		for _, p := range parts {
			add(p)
		}
	}
	for _, n := range g.nodes {
		field(1, n.marshal())
	}
	add(appendString(nil, 2, g.name))
	for _, t := range g.inits {
		field(5, t.header(), t.raw)
	}
	for _, v := range g.inputs {
		field(11, v.marshal())
	}
	for _, v := range g.outputs {
		field(12, v.marshal())
	}

	var head []byte
	head = protowire.AppendTag(head, 1, protowire.VarintType)
	head = protowire.AppendVarint(head, IRVersion)
	head = appendString(head, 2, producer)
	head = protowire.AppendTag(head, 7, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(graphLen))

	var tail []byte
	var opset []byte
	opset = appendString(opset, 1, "")
	opset = protowire.AppendTag(opset, 2, protowire.VarintType)
	opset = protowire.AppendVarint(opset, Opset)
	tail = protowire.AppendTag(tail, 8, protowire.BytesType)
	tail = protowire.AppendBytes(tail, opset)
	for _, p := range g.props {
		var kv []byte
		kv = appendString(kv, 1, p[0])
		kv = appendString(kv, 2, p[1])
		tail = protowire.AppendTag(tail, 14, protowire.BytesType)
		tail = protowire.AppendBytes(tail, kv)
	}

	out := make([]byte, 0, len(head)+graphLen+len(tail))
	out = append(out, head...)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return append(out, tail...)
}

func appendString(b []byte, field protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (n node) marshal() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = appendString(b, 1, in)
	}
	for _, out := range n.outputs {
		b = appendString(b, 2, out)
	}
	b = appendString(b, 3, n.name)
	b = appendString(b, 4, n.op)
	for _, a := range n.attrs {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, a.marshal())
	}
	return b
}

func (a Attr) marshal() []byte {
	var b []byte
	b = appendString(b, 1, a.name)
	switch a.kind {
	case 1:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.f))
	case 2:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.i))
	case 7:
		var packed []byte
		for _, v := range a.ints {
			packed = protowire.AppendVarint(packed, uint64(v))
		}
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(a.kind))
	return b
}

// header is the TensorProto up to its raw_data's bytes, which follow it.
func (t tensor) header() []byte {
	var b []byte
	if len(t.dims) > 0 {
		var packed []byte
		for _, d := range t.dims {
			packed = protowire.AppendVarint(packed, uint64(d))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.dtype))
	b = appendString(b, 8, t.name)
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(len(t.raw)))
}

func (v valueInfo) marshal() []byte {
	var shape []byte
	for _, d := range v.dims {
		var dim []byte
		switch d := d.(type) {
		case int64:
			dim = protowire.AppendTag(dim, 1, protowire.VarintType)
			dim = protowire.AppendVarint(dim, uint64(d))
		case int:
			dim = protowire.AppendTag(dim, 1, protowire.VarintType)
			dim = protowire.AppendVarint(dim, uint64(d))
		case string:
			dim = appendString(dim, 2, d)
		default:
			panic(fmt.Sprintf("onnxgraph: dimension of type %T", d))
		}
		shape = protowire.AppendTag(shape, 1, protowire.BytesType)
		shape = protowire.AppendBytes(shape, dim)
	}
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(v.dtype))
	tt = protowire.AppendTag(tt, 2, protowire.BytesType)
	tt = protowire.AppendBytes(tt, shape)
	var typ []byte
	typ = protowire.AppendTag(typ, 1, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tt)

	var b []byte
	b = appendString(b, 1, v.name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, typ)
	return b
}

// Package edn reads EDN as real OrcBrew exports write it.
//
// Decoding is done by olympos.io/encoding/edn. Before it sees the input, a
// scanner in this package strips a byte-order mark, rewrites what that
// library cannot read (Clojure namespaced maps #:ns{...}, a bare ":"
// keyword), cuts trailing data after the first value, checks UTF-8 and
// enforces limits on size, nesting depth and string length. The scanner
// knows the structure of the input, so truncated files and unbalanced
// brackets get an error naming the line, column and byte offset.
package edn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"

	olympos "olympos.io/encoding/edn"
)

// Defaults for the zero fields of Options.
const (
	DefaultMaxSize      = 64 << 20
	DefaultMaxDepth     = 100
	DefaultMaxStringLen = 1 << 20
)

// Options tune Parse and Read. A nil *Options means all defaults.
type Options struct {
	// MaxSize is the largest input accepted, in bytes (default 64 MiB).
	MaxSize int64
	// MaxDepth is the deepest nesting of collections accepted (default 100).
	MaxDepth int
	// MaxStringLen is the longest string literal accepted, in bytes of
	// source text (default 1 MiB).
	MaxStringLen int
	// RepairUTF8 replaces each invalid UTF-8 sequence with U+FFFD and
	// reports it as a warning. Without it invalid UTF-8 is an error.
	RepairUTF8 bool
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxSize <= 0 {
		r.MaxSize = DefaultMaxSize
	}
	if r.MaxDepth <= 0 {
		r.MaxDepth = DefaultMaxDepth
	}
	if r.MaxStringLen <= 0 {
		r.MaxStringLen = DefaultMaxStringLen
	}
	return r
}

// The values Parse returns. Strings are Go strings, integers int64 (or
// *big.Int with the N suffix), floats float64, booleans bool, nil nil.
type (
	// Keyword is a keyword without its leading colon: "orcpub.dnd.e5/spells".
	// The bare keyword ":" is Keyword("").
	Keyword = olympos.Keyword
	// Symbol is a symbol other than nil, true and false.
	Symbol = olympos.Symbol
	// Tag is a tagged value that has no built-in meaning, e.g. #foo/bar 1.
	Tag = olympos.Tag
	// Char is a character literal such as \a.
	Char rune
	// Map is an EDN map. Keys Go cannot hash (vectors, lists, maps, sets) are
	// held as Composite, their EDN text.
	Map map[any]any
	// Vector is a vector or a list.
	Vector []any
	// Set is a set, in no particular order.
	Set []any
	// Composite is the EDN text of a collection used as a map key or set
	// element.
	Composite string
)

// ErrTooLarge is returned (wrapped) when the input exceeds Options.MaxSize.
var ErrTooLarge = errors.New("edn: input too large")

// SyntaxError is an error at a known place in the input.
type SyntaxError struct {
	// Offset is the 0-based byte offset into the input as given (a
	// byte-order mark included).
	Offset int64
	// Line and Column are 1-based; Column counts bytes.
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("edn: line %d, column %d (byte offset %d): %s", e.Line, e.Column, e.Offset, e.Msg)
}

// Warning is something Parse repaired or ignored.
type Warning struct {
	Offset       int64
	Line, Column int
	Msg          string
}

func (w Warning) String() string {
	if w.Offset < 0 {
		return w.Msg
	}
	return fmt.Sprintf("line %d, column %d (byte offset %d): %s", w.Line, w.Column, w.Offset, w.Msg)
}

// Result is a parsed EDN document.
type Result struct {
	// Value is the first value in the input.
	Value any
	// Warnings lists what was repaired or ignored, in input order.
	Warnings []Warning
}

// Read reads all of r, up to opts.MaxSize, and parses it.
func Read(r io.Reader, opts *Options) (*Result, error) {
	o := opts.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, o.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("edn: read: %w", err)
	}
	return Parse(data, &o)
}

// Parse parses the first EDN value in data.
func Parse(data []byte, opts *Options) (*Result, error) {
	o := opts.withDefaults()
	if int64(len(data)) > o.MaxSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, o.MaxSize)
	}
	clean, warns, err := scan(data, &o)
	if err != nil {
		return nil, err
	}
	v, err := decode(clean)
	if err != nil {
		return nil, err
	}
	return &Result{Value: v, Warnings: warns}, nil
}

// decode runs the olympos decoder on input the scanner has vetted, and
// turns any panic inside it into an error: a malformed file must never take
// the process down.
func decode(clean []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("edn: decoder failed: %v", r)
		}
	}()
	var raw any
	if err := olympos.NewDecoder(bytes.NewReader(clean)).Decode(&raw); err != nil {
		return nil, fmt.Errorf("edn: %w", err)
	}
	return convert(raw), nil
}

// emptyKeyword is what the scanner writes for a bare ":"; convert turns it
// back into Keyword("").
const emptyKeyword = "lorekeeper.edn/empty-keyword"

// convert turns olympos' values into this package's, in place where the
// types allow it (maps and slices have the same underlying types), since
// the copy would double the allocations of a parse.
func convert(v any) any {
	switch x := v.(type) {
	case map[any]any:
		var rekey []any
		for k, val := range x {
			if needsRekey(k) {
				rekey = append(rekey, k)
			}
			x[k] = convert(val)
		}
		for _, k := range rekey {
			val := x[k]
			delete(x, k)
			x[convertKey(k)] = val
		}
		return Map(x)
	case map[any]bool:
		s := make(Set, 0, len(x))
		for k := range x {
			s = append(s, convertKey(k))
		}
		sortValues(s)
		return s
	case []any:
		for i, e := range x {
			x[i] = convert(e)
		}
		return Vector(x)
	case olympos.Keyword:
		if x == emptyKeyword {
			return Keyword("")
		}
		return x
	case rune:
		return Char(x)
	case big.Int:
		return &x
	case olympos.Tag:
		x.Value = convert(x.Value)
		return x
	default:
		return v
	}
}

// needsRekey reports whether convert changes the map key k.
func needsRekey(k any) bool {
	switch x := k.(type) {
	case *any, rune, big.Int, olympos.Tag:
		return true
	case olympos.Keyword:
		return x == emptyKeyword
	}
	return false
}

func convertKey(k any) any {
	if p, ok := k.(*any); ok {
		return Composite(String(convert(*p)))
	}
	return convert(k)
}

// sortValues orders set elements by their EDN text, so that a set always
// comes out the same way.
func sortValues(s []any) {
	sort.SliceStable(s, func(i, j int) bool { return String(s[i]) < String(s[j]) })
}

// String renders v as EDN text, with map keys in sorted order. It is meant
// for messages and for deterministic keys, not for round trips of every
// value.
func String(v any) string {
	var b bytes.Buffer
	writeEDN(&b, v)
	return b.String()
}

func writeEDN(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("nil")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case Keyword:
		b.WriteString(":")
		b.WriteString(string(x))
	case Symbol:
		b.WriteString(string(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case *big.Int:
		b.WriteString(x.String())
		b.WriteString("N")
	case Char:
		b.WriteString(`\`)
		b.WriteRune(rune(x))
	case Composite:
		b.WriteString(string(x))
	case Tag:
		b.WriteString("#" + x.Tagname + " ")
		writeEDN(b, x.Value)
	case Vector:
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(" ")
			}
			writeEDN(b, e)
		}
		b.WriteString("]")
	case Set:
		b.WriteString("#{")
		for i, e := range x {
			if i > 0 {
				b.WriteString(" ")
			}
			writeEDN(b, e)
		}
		b.WriteString("}")
	case Map:
		keys := make([]string, 0, len(x))
		byText := make(map[string]any, len(x))
		for k := range x {
			t := String(k)
			keys = append(keys, t)
			byText[t] = k
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, t := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t)
			b.WriteString(" ")
			writeEDN(b, x[byText[t]])
		}
		b.WriteString("}")
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

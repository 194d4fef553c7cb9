package embeddedindex

import "slices"

// narrowMinDims is the least dimension count whose vectors rows keeps in
// 8 bits. A scan of thousands of vectors is bound by memory bandwidth, and
// 8-bit rows are half the bytes of 16-bit ones: 49,790 rows of 512
// dimensions are 25 MB instead of 51, and the kernel scanning them took
// 22 instead of 48 ns a row. Scaled per row to its largest
// component, an 8-bit row of a dense unit vector scores within about
// 1e-3 of the cosine: the embedding model's vectors (512 dimensions,
// largest components 0.05-0.11) scored within 1.3e-4 at the median and
// 1.1e-3 at worst over 2.2 million pairs of the bundled catalogue's
// vectors. A vector of few dimensions has large components, and 8 bits
// would lose more than the driver contract allows: those keep 16 bits.
const narrowMinDims = 256

// rows holds the points' unit vectors, row j for point j, in fixed point:
// 8 bits with a scale per row (dims >= narrowMinDims), else 16 bits
// (fixedOne is 1). Queries are 16-bit fixed point either way.
type rows struct {
	dims   int
	narrow bool
	wide   []int16   // !narrow: len = n*dims
	small  []int8    // narrow: len = n*dims
	scale  []float32 // narrow: per row, dot product to cosine
}

func newRows(dims, n int) rows {
	r := rows{dims: dims, narrow: dims >= narrowMinDims}
	r.grow(n)
	return r
}

// len is the number of rows.
func (r *rows) len() int {
	if r.narrow {
		return len(r.scale)
	}
	return len(r.wide) / r.dims
}

// grow makes room for n more rows.
func (r *rows) grow(n int) {
	if r.narrow {
		r.small = slices.Grow(r.small, n*r.dims)
		r.scale = slices.Grow(r.scale, n)
		return
	}
	r.wide = slices.Grow(r.wide, n*r.dims)
}

// push appends a zero row and returns its index.
func (r *rows) push() int {
	j := r.len()
	if r.narrow {
		r.small = extend(r.small, r.dims)
		r.scale = extend(r.scale, 1)
	} else {
		r.wide = extend(r.wide, r.dims)
	}
	return j
}

// extend appends n zero elements to s without a temporary slice.
func extend[E any](s []E, n int) []E {
	s = slices.Grow(s, n)
	s = s[:len(s)+n]
	clear(s[len(s)-n:])
	return s
}

// set writes the unit vector v as row j.
func (r *rows) set(j int, v []float32) {
	if r.narrow {
		r.scale[j] = quantize8(r.small[j*r.dims:(j+1)*r.dims], v)
		return
	}
	quantize(r.wide[j*r.dims:(j+1)*r.dims], v)
}

// copyRow sets row j to row i of src (rows of the same dims).
func (r *rows) copyRow(j int, src *rows, i int) {
	if r.narrow {
		copy(r.small[j*r.dims:(j+1)*r.dims], src.small[i*r.dims:(i+1)*r.dims])
		r.scale[j] = src.scale[i]
		return
	}
	copy(r.wide[j*r.dims:(j+1)*r.dims], src.wide[i*r.dims:(i+1)*r.dims])
}

// truncate keeps the first n rows.
func (r *rows) truncate(n int) {
	if r.narrow {
		r.small, r.scale = r.small[:n*r.dims], r.scale[:n]
		return
	}
	r.wide = r.wide[:n*r.dims]
}

// score is the similarity of the fixed-point query q and row j.
func (r *rows) score(q []int16, j int) float32 {
	if r.narrow {
		return float32(dotInt8(r.small[j*r.dims:(j+1)*r.dims], q)) * r.scale[j]
	}
	return float32(float64(dotInt16(r.wide[j*r.dims:(j+1)*r.dims], q)) / (fixedOne * fixedOne))
}

package vectorbundle_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/vectorbundle"
)

func unitVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var ss float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		ss += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(ss))
	}
	return v
}

func encode(t *testing.T, bl *vectorbundle.Builder) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := bl.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(t *testing.T, b []byte) *vectorbundle.Bundle {
	t.Helper()
	bd, err := vectorbundle.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return bd
}

// TestBundle_RoundTrip: every vector added comes back within one
// quantization step per component, a text not added
// is not found, and the same vectors encode to the same bytes whatever
// the order they were added in.
func TestBundle_RoundTrip(t *testing.T) {
	const dims, n = 64, 300
	r := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	vecs := make([][]float32, n)
	hd := vectorbundle.Header{Model: "m", Checksum: "abc", Dimensions: dims}
	fwd, rev := vectorbundle.NewBuilder(hd), vectorbundle.NewBuilder(hd)
	contents := []vectorbundle.Entry{{Key: "open5e_v2:srd-2014:spell:fireball", Name: "Fireball"}, {Key: "k2", Name: "Line\nbreak"}}
	fwd.SetContents(contents)
	rev.SetContents(contents)
	for i := range n {
		texts[i] = "text " + strconv.Itoa(i)
		vecs[i] = unitVector(r, dims)
		if err := fwd.Add(vectorbundle.TextHash(texts[i]), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := n - 1; i >= 0; i-- {
		if err := rev.Add(vectorbundle.TextHash(texts[i]), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	enc := encode(t, fwd)
	if !bytes.Equal(enc, encode(t, rev)) {
		t.Error("the same vectors added in another order encode to other bytes")
	}
	b := decode(t, enc)
	if b.Len() != n || b.Count != n || b.Model != "m" || b.Checksum != "abc" || b.Dimensions != dims {
		t.Fatalf("decoded %d vectors, header %+v; want %d of m/abc/%d", b.Len(), b.Header, n, dims)
	}
	if !slices.Equal(b.Contents, contents) {
		t.Errorf("contents %q, want %q", b.Contents, contents)
	}
	only, err := vectorbundle.DecodeContents(bytes.NewReader(enc))
	if err != nil || !slices.Equal(only.Contents, contents) || only.Len() != 0 {
		t.Errorf("DecodeContents: %q and %d vectors (%v), want %q and none", only.Contents, only.Len(), err, contents)
	}
	for i, text := range texts {
		h := vectorbundle.TextHash(text)
		got, ok := b.Lookup(h)
		if !ok {
			t.Fatalf("%q not found", text)
		}
		step, _ := b.Step(h)
		if d := maxDiff(got, vecs[i]); d > step {
			t.Errorf("%q: a component is %g from the original, more than a step (%g)", text, d, step)
		}
		if c := cosine(got, vecs[i]); c < 0.9995 {
			t.Errorf("%q: cosine with the original %.5f", text, c)
		}
	}
	if _, ok := b.Lookup(vectorbundle.TextHash("never added")); ok {
		t.Error("a text never added was found")
	}
}

// TestBuilder_Keep: a vector kept from a bundle is stored as it was, so a
// rebuild that embeds nothing new writes the same bytes.
func TestBuilder_Keep(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hd := vectorbundle.Header{Model: "m", Checksum: "abc", Dimensions: 32}
	bl := vectorbundle.NewBuilder(hd)
	var hs []vectorbundle.Hash
	for i := range 50 {
		h := vectorbundle.TextHash(strconv.Itoa(i))
		hs = append(hs, h)
		if err := bl.Add(h, unitVector(r, 32)); err != nil {
			t.Fatal(err)
		}
	}
	first := encode(t, bl)
	old := decode(t, first)
	again := vectorbundle.NewBuilder(hd)
	for _, h := range hs {
		if !again.Keep(old, h) {
			t.Fatalf("%x not kept", h)
		}
	}
	if again.Keep(old, vectorbundle.TextHash("absent")) {
		t.Error("kept a vector the bundle does not hold")
	}
	if !bytes.Equal(first, encode(t, again)) {
		t.Error("a bundle made of kept vectors differs from the one they were kept from")
	}
}

func TestBuilder_Add_wrongDimensions(t *testing.T) {
	bl := vectorbundle.NewBuilder(vectorbundle.Header{Dimensions: 4})
	if err := bl.Add(vectorbundle.TextHash("x"), []float32{1, 0, 0}); err == nil {
		t.Error("a vector of 3 dimensions was added to a bundle of 4")
	}
}

func TestDecode_notABundle(t *testing.T) {
	good := encode(t, vectorbundle.NewBuilder(vectorbundle.Header{Model: "m", Dimensions: 4}))
	for name, b := range map[string][]byte{
		"empty":       nil,
		"not zstd":    []byte("hello"),
		"cut short":   good[:len(good)/2],
		"other bytes": append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^0xff),
	} {
		if _, err := vectorbundle.Decode(bytes.NewReader(b)); !errors.Is(err, vectorbundle.ErrFormat) {
			t.Errorf("%s: Decode = %v, want ErrFormat", name, err)
		}
	}
}

func TestBundle_Matches(t *testing.T) {
	b := decode(t, encode(t, vectorbundle.NewBuilder(vectorbundle.Header{Model: "use-lite", Checksum: "abc", Dimensions: 4})))
	for _, c := range []struct {
		model, sum string
		want       bool
	}{
		{"use-lite", "abc", true},
		{"use-lite", "abd", false},
		{"minilm-l6-v2", "abc", false},
	} {
		if got, why := b.Matches(c.model, c.sum); got != c.want || got == (why != "") {
			t.Errorf("Matches(%s, %s) = %v %q, want %v", c.model, c.sum, got, why, c.want)
		}
	}
}

// countingModel is a model that makes a vector of each text's length and
// counts the texts it is asked for.
type countingModel struct{ texts []string }

func (m *countingModel) Info() embedder.ModelInfo {
	return embedder.ModelInfo{Name: "m", Dimensions: 2}
}

func (m *countingModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	m.texts = append(m.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 0}
	}
	return out, nil
}

// TestModel_Embed: texts the bundle holds come from it, the others from
// the model, in the caller's order; a bundle that cannot be read leaves
// every text to the model; Release decodes the bundle again when next
// needed.
func TestModel_Embed(t *testing.T) {
	bl := vectorbundle.NewBuilder(vectorbundle.Header{Model: "m", Checksum: "c", Dimensions: 2})
	if err := bl.Add(vectorbundle.TextHash("bundled"), []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	enc := encode(t, bl)
	loads := 0
	next := &countingModel{}
	m := vectorbundle.NewModel(next, func() (*vectorbundle.Bundle, error) {
		loads++
		return vectorbundle.Decode(bytes.NewReader(enc))
	})
	got, err := m.Embed(t.Context(), []string{"homebrew", "bundled", "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{8, 0}, {0, 1}, {1, 0}}
	for i := range want {
		if maxDiff(got[i], want[i]) > 1e-6 {
			t.Errorf("vector %d = %v, want %v", i, got[i], want[i])
		}
	}
	if len(next.texts) != 2 || next.texts[0] != "homebrew" || next.texts[1] != "x" {
		t.Errorf("the model embedded %q, want [homebrew x]", next.texts)
	}
	if b, mo := m.Counts(); b != 1 || mo != 2 {
		t.Errorf("Counts = %d from the bundle, %d from the model; want 1, 2", b, mo)
	}
	m.Release()
	if _, err := m.Embed(t.Context(), []string{"bundled"}); err != nil || loads != 2 {
		t.Errorf("after Release: %v, the bundle decoded %d times, want 2", err, loads)
	}

	broken := vectorbundle.NewModel(&countingModel{}, func() (*vectorbundle.Bundle, error) {
		return vectorbundle.Decode(bytes.NewReader(nil))
	})
	if got, err := broken.Embed(t.Context(), []string{"bundled"}); err != nil || got[0][0] != 7 {
		t.Errorf("with an unreadable bundle: %v %v, want the model's vector", got, err)
	}
	if !errors.Is(broken.Err(), vectorbundle.ErrFormat) {
		t.Errorf("Err = %v, want ErrFormat", broken.Err())
	}
}

func maxDiff(a, b []float32) float32 {
	var d float32
	for i := range a {
		d = max(d, float32(math.Abs(float64(a[i]-b[i]))))
	}
	return d
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// nullModel makes zero vectors at no cost: what is left of Model.Embed is
// the bundle's own work.
type nullModel struct{ dims int }

func (m nullModel) Info() embedder.ModelInfo {
	return embedder.ModelInfo{Name: "m", Dimensions: m.dims}
}

func (m nullModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, m.dims)
	}
	return out, nil
}

// BenchmarkModel_Embed_homebrew is what the bundle adds to embedding texts
// it does not hold (homebrew): a hash and a search of the bundled
// catalogue's 9,722 vectors per text, against the model's milliseconds.
func BenchmarkModel_Embed_homebrew(b *testing.B) {
	bundled, err := vectorbundle.Bundled()
	if err != nil {
		b.Fatal(err)
	}
	m := vectorbundle.NewModel(nullModel{bundled.Dimensions}, func() (*vectorbundle.Bundle, error) { return bundled, nil })
	texts := make([]string, 256)
	for i := range texts {
		texts[i] = strings.Repeat("a homebrew spell that does something unusual ", 10) + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

package edn_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/edn"
)

// bigSample builds a multi-book export of about n bytes from the richest
// real sample, one wrapper entry per copy.
func bigSample(b *testing.B, n int) []byte {
	b.Helper()
	one, err := os.ReadFile("testdata/orcbrew/jnwhiteh-orcbrew-utils_example.orcbrew")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString("{")
	for i := 0; buf.Len() < n; i++ {
		fmt.Fprintf(&buf, "%q ", fmt.Sprintf("Book %d", i))
		buf.Write(one)
		buf.WriteString("\n")
	}
	buf.WriteString("}")
	return buf.Bytes()
}

func BenchmarkParse(b *testing.B) {
	cases := []struct {
		name string
		data func(*testing.B) []byte
	}{
		{"orcbrew-4MiB", func(b *testing.B) []byte { return bigSample(b, 4<<20) }},
		{"namespaced-1MiB", func(b *testing.B) []byte {
			one, err := os.ReadFile("testdata/orcbrew/orcpub-dmv_demo-content.orcbrew")
			if err != nil {
				b.Fatal(err)
			}
			inner := bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(one), []byte("{")), []byte("}"))
			var buf bytes.Buffer
			buf.WriteString("{")
			for i := 0; buf.Len() < 1<<20; i++ {
				buf.Write(bytes.Replace(inner, []byte(`"Demo Content"`), []byte(fmt.Sprintf(`"Demo %d"`, i)), 1))
				buf.WriteString("\n")
			}
			buf.WriteString("}")
			return buf.Bytes()
		}},
		{"string-3MiB", func(b *testing.B) []byte {
			return []byte(`{:description "` + strings.Repeat("The ward hums. ", 3<<20/15) + `"}`)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data := c.data(b)
			opts := &edn.Options{MaxStringLen: 4 << 20}
			if _, err := edn.Parse(data, opts); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := edn.Parse(data, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

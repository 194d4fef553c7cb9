package orcbrew_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// manyBooks builds a wrapped export of n books, each a copy of the richest
// real sample (13 entities of 12 kinds).
func manyBooks(b *testing.B, n int) []byte {
	b.Helper()
	one := readSample(b, good+"/jnwhiteh-orcbrew-utils_example.orcbrew")
	var buf bytes.Buffer
	buf.WriteString("{")
	for i := range n {
		fmt.Fprintf(&buf, "%q ", fmt.Sprintf("Book %d", i))
		buf.Write(one)
		buf.WriteString("\n")
	}
	buf.WriteString("}")
	return buf.Bytes()
}

// BenchmarkDecode measures parse + normalise: MB/s and entities/s.
func BenchmarkDecode(b *testing.B) {
	data := manyBooks(b, 200)
	f, err := orcbrew.Decode("bench.orcbrew", data, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := orcbrew.Decode("bench.orcbrew", data, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(f.Entities)*b.N)/time.Since(start).Seconds(), "entities/s")
}

// BenchmarkImport measures a whole import through the real bucket: put,
// watcher, parse, publish to the stream, status written.
func BenchmarkImport(b *testing.B) {
	js := ingesttest.JetStream(b, nil)
	runWatcher(b, js, nil)
	data := manyBooks(b, 40)
	var entities int
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		// A new book name per round, so every entity is new content.
		d := bytes.Replace(data, []byte(`"Book 0"`), []byte(fmt.Sprintf(`"Round %d"`, i)), 1)
		digest := orcbrew.Digest(d)
		if _, err := orcbrew.Put(b.Context(), js, "bench.orcbrew", bytes.NewReader(d), nil); err != nil {
			b.Fatal(err)
		}
		for {
			all, err := orcbrew.Statuses(b.Context(), js)
			if err != nil {
				b.Fatal(err)
			}
			if len(all) == 1 && all[0].GetDigest() == digest {
				if all[0].GetStatus() != lkv1.ImportState_STATUS_OK {
					b.Fatalf("import: %v", all[0])
				}
				entities += len(all[0].GetEntityKeys())
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(float64(entities)/time.Since(start).Seconds(), "entities/s")
}

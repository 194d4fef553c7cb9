package onnx_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/onnx"
)

// A paragraph of rules prose; hundredWords rotates it so every text differs.
var prose = strings.Fields(`A bright streak flashes from your pointing finger to a point you choose
within range and then blossoms with a low roar into an explosion of flame. Each creature in a
twenty foot radius sphere centered on that point must make a Dexterity saving throw. A target
takes fire damage on a failed save, or half as much damage on a successful one. The fire spreads
around corners. It ignites flammable objects in the area that are not being worn or carried.
When you cast this spell using a spell slot of fourth level or higher, the damage increases for
each slot level above the third. Thin and wispy flames wreathe your body for the duration,
shedding bright light in a ten foot radius and dim light for an additional ten feet.`)

func hundredWords(i int) string {
	words := make([]string, 100)
	for j := range words {
		words[j] = prose[(i*7+j)%len(prose)]
	}
	return strings.Join(words, " ")
}

func openBench(b *testing.B, dir string, opts *onnx.Options) *onnx.Model {
	b.Helper()
	resetPeakRSS()
	opts.Logger = slog.New(slog.DiscardHandler)
	m, err := onnx.Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// cpuTime is the process's user+system CPU time so far, all threads
// included. On a shared machine wall-clock figures mostly measure the
// neighbours; CPU time per op is steadier (ONNX Runtime's spin-waiting
// threads count in it, so it errs high).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS returns what the test itself allocated (the random MiniLM
// model is built in memory) and resets the kernel's peak-RSS mark, so
// peakRSS measures the model from its loading on.
func resetPeakRSS() {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS reports the process's peak resident set (VmHWM) in MB since
// openBench reset it, and its resident set now (VmRSS: what the model
// keeps after its runs). Memory a previous model in the same process kept
// (ONNX Runtime and malloc do not return all of it) still counts, so run
// one benchmark per process for a clean per-model figure.
func peakRSS(b *testing.B) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			b.ReportMetric(float64(kb)/1024, "peakRSS_MB")
		}
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			b.ReportMetric(float64(kb)/1024, "RSS_MB")
		}
	}
}

func benchModels(b *testing.B) map[string]func(b *testing.B, opts *onnx.Options) *onnx.Model {
	return map[string]func(b *testing.B, opts *onnx.Options) *onnx.Model{
		"use-lite": func(b *testing.B, opts *onnx.Options) *onnx.Model {
			return openBench(b, modelDir(b), opts)
		},
		// all-MiniLM-L6-v2's shape with random weights: the cost of the
		// real model, not its vectors.
		"minilm-shape": func(b *testing.B, opts *onnx.Options) *onnx.Model {
			opts.Model = modelfile.MiniLML6V2
			opts.LibraryPath = modelfile.LibraryPath(modelDir(b))
			return openBench(b, miniLMDir(b), opts)
		},
	}
}

// BenchmarkEmbed_query is one short query: the latency a semantic search
// adds.
func BenchmarkEmbed_query(b *testing.B) {
	for _, name := range []string{"use-lite", "minilm-shape"} {
		b.Run(name, func(b *testing.B) {
			m := benchModels(b)[name](b, &onnx.Options{})
			ctx := context.Background()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := m.Embed(ctx, []string{"protect from fire damage"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			peakRSS(b)
		})
	}
}

// BenchmarkEmbed_throughput embeds batches of ~100-word texts (about 130
// tokens: USE-lite clips at 128, MiniLM reads up to 256) and reports texts/s.
func BenchmarkEmbed_throughput(b *testing.B) {
	for _, name := range []string{"use-lite", "minilm-shape"} {
		for _, cfg := range []struct{ threads, batch int }{{1, 8}, {2, 4}, {2, 8}, {2, 16}} {
			b.Run(fmt.Sprintf("%s/threads=%d/batch=%d", name, cfg.threads, cfg.batch), func(b *testing.B) {
				m := benchModels(b)[name](b, &onnx.Options{Threads: cfg.threads, BatchSize: cfg.batch})
				texts := make([]string, 128)
				for i := range texts {
					texts[i] = hundredWords(i)
				}
				ctx := context.Background()
				n := 0
				cpu0 := cpuTime()
				for b.Loop() {
					if _, err := m.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
					n += len(texts)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "texts/s")
				// Texts per second of CPU time: on a shared machine, twice this
				// estimates what two idle cores would sustain.
				b.ReportMetric(float64(n)/(cpuTime()-cpu0).Seconds(), "texts/cpu-s")
				peakRSS(b)
			})
		}
	}
}

// BenchmarkEmbed_trim embeds batches of long texts as a first load does,
// then trims the model: RSS_MB is what the model keeps before, and
// trimmed-RSS_MB after (the arena given back); trim-ms is what a trim
// costs.
func BenchmarkEmbed_trim(b *testing.B) {
	m := openBench(b, modelDir(b), &onnx.Options{})
	texts := make([]string, 128)
	for i := range texts {
		texts[i] = hundredWords(i)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		peakRSS(b)
		b.StartTimer()
		start := time.Now()
		if err := m.Trim(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "trim-ms")
		b.ReportMetric(rssMB(), "trimmed-RSS_MB")
	}
}

// rssMB is the process's resident set now, in MB.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

package natsconsume_test

import (
	"testing"
	"time"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/natsconsume"
)

// BenchmarkPipeline measures the whole consumer on the full snapshot from a
// pre-filled stream (fetch, decode, embed, write to Badger and the index,
// ack) against the model alone on the same texts. The ratio is the share of
// the pipeline's time spent in the model: the model is the physical limit
// on these machines, so the goal is a ratio of at least 0.8.
func BenchmarkPipeline(b *testing.B) {
	es := snapshotEntities(b)
	info := testModel(b).Info()
	texts := make([]string, len(es))
	for i, e := range es {
		texts[i] = embedder.Text(e, info.Lowercase)
	}
	var modelSecs, pipeSecs float64
	for b.Loop() {
		start := time.Now()
		if _, err := testModel(b).Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
		modelSecs += time.Since(start).Seconds()

		b.StopTimer()
		_, js := startJetStream(b)
		publish(b, js, es)
		st := openStore(b, b.TempDir())
		b.StartTimer()
		start = time.Now()
		stop := runConsumer(b, natsconsume.New(js, st, testModel(b), nil))
		waitFor(b, "every entity stored", func() bool { return st.Stats().Entities >= len(es) })
		pipeSecs += time.Since(start).Seconds()
		b.StopTimer()
		stop()
		st.Close()
		b.StartTimer()
	}
	n := float64(b.N * len(es))
	b.ReportMetric(n/modelSecs, "model-texts/s")
	b.ReportMetric(n/pipeSecs, "pipeline-entities/s")
	b.ReportMetric(modelSecs/pipeSecs, "model-share")
}

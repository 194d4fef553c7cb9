package onnx_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"lorekeeper.dev/embedder/onnx"
)

// Open the default model (USE-lite) from the directory `make model` fills,
// and embed a query and a document. Cosine similarity is the dot product,
// since the vectors have unit length.
func ExampleOpen() {
	m, err := onnx.Open(os.Getenv("LOREKEEPER_MODEL_DIR"), nil)
	if err != nil {
		log.Fatal(err) // says to run `make model` when the files are missing
	}
	defer m.Close()

	texts := []string{"protect from fire damage", "Fire Shield: thin and wispy flames wreathe your body."}
	if m.Info().Lowercase {
		for i := range texts {
			texts[i] = strings.ToLower(texts[i])
		}
	}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		log.Fatal(err)
	}
	var cos float32
	for i := range vecs[0] {
		cos += vecs[0][i] * vecs[1][i]
	}
	fmt.Printf("%s, %d dimensions, cosine %.2f\n", m.Info().Name, len(vecs[0]), cos)
}

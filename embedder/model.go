package embedder

// ModelInfo describes the embedding model in use: which one made a vector
// index's vectors, and how texts must be prepared for it.
type ModelInfo struct {
	// Name is the registry name, such as "use-lite" or "minilm-l6-v2".
	Name string
	// Dimensions is the length of every vector the model returns.
	Dimensions int
	// Lowercase is true when the model's vocabulary is case-sensitive and
	// texts (and queries) should be lower-cased before embedding: USE-lite
	// scores "bag of holding" against "Bag of Holding" at only 0.49.
	Lowercase bool
}

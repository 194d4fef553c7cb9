package vectorbundle

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"lorekeeper.dev/embedder"
)

// Embedder is the model a Model falls back to.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Info() embedder.ModelInfo
}

// Model embeds as its model does, taking the vectors of the texts a
// bundle holds from the bundle. It is safe for concurrent use.
//
// The bundle is decoded when first needed and held until Release (a node
// releases it once it has caught up: a few megabytes it needs again only
// to rebuild its store); the next Embed decodes it again.
type Model struct {
	next Embedder
	load func() (*Bundle, error)

	mu      sync.Mutex
	bundle  *Bundle
	loadErr error

	fromBundle, fromModel atomic.Int64
}

// NewModel returns next answered from the bundle load returns. The
// caller has checked that the bundle is next's (Matches).
func NewModel(next Embedder, load func() (*Bundle, error)) *Model {
	return &Model{next: next, load: load}
}

// Info is the model's.
func (m *Model) Info() embedder.ModelInfo { return m.next.Info() }

// Embed returns the bundle's vectors for the texts it holds and the
// model's for the others, in order.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b := m.held()
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	for i, t := range texts {
		if b == nil {
			miss = append(miss, t)
			at = append(at, i)
			continue
		}
		if v, ok := b.Lookup(TextHash(t)); ok {
			out[i] = v
			continue
		}
		miss = append(miss, t)
		at = append(at, i)
	}
	m.fromBundle.Add(int64(len(texts) - len(miss)))
	if len(miss) == 0 {
		return out, nil
	}
	vecs, err := m.next.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	m.fromModel.Add(int64(len(miss)))
	for j, i := range at {
		out[i] = vecs[j]
	}
	return out, nil
}

// held is the bundle, decoded if it is not held; nil if it cannot be
// decoded (the model then embeds every text, as without a bundle).
func (m *Model) held() *Bundle {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bundle == nil && m.loadErr == nil {
		m.bundle, m.loadErr = m.load()
	}
	return m.bundle
}

// Err is why the bundle could not be decoded, nil if it could.
func (m *Model) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadErr
}

// Release drops the decoded bundle.
func (m *Model) Release() {
	m.mu.Lock()
	m.bundle = nil
	m.mu.Unlock()
}

// Counts is how many vectors came from the bundle and how many from the
// model.
func (m *Model) Counts() (fromBundle, fromModel int64) {
	return m.fromBundle.Load(), m.fromModel.Load()
}

// Matches reports whether b's vectors are those of the model named name
// whose files have checksum, and if not, why.
func (b *Bundle) Matches(name, checksum string) (bool, string) {
	switch {
	case b.Model != name:
		return false, fmt.Sprintf("the bundled vectors are %s's, not %s's", b.Model, name)
	case b.Checksum != checksum:
		return false, fmt.Sprintf("the bundled vectors were made by %s with checksum %.12s, this one's is %.12s", b.Model, b.Checksum, checksum)
	}
	return true, ""
}

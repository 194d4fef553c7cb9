package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/embedder"
	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Embedder turns query texts into vectors; the embedding model satisfies
// it. The query service never imports the model (cgo): the command passes
// it in.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Errors the service returns, matched with errors.Is; toStatus maps them
// to gRPC codes.
var (
	// ErrInvalidArgument: a request field is out of its limits. The error
	// is an *ArgumentError naming the field.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: GetEntity found no entity with the key.
	ErrNotFound = errors.New("not found")
)

// ArgumentError is a request field that is out of its limits.
type ArgumentError struct {
	Field  string
	Reason string
}

func (e *ArgumentError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidArgument) hold.
func (e *ArgumentError) Unwrap() error { return ErrInvalidArgument }

func invalid(field, format string, args ...any) error {
	return &ArgumentError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Limits on request input.
const (
	DefaultLimit           = 20
	MaxNameLength          = 200
	MaxSemanticQuery       = 512  // longer is truncated, with a warning
	MaxQueryInput          = 8192 // longer is rejected
	MaxDocuments           = 100
	MaxFilterValues        = 50
	DefaultSemanticTimeout = 2 * time.Second
)

// Options configure a Service. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// SemanticTimeout bounds embedding a query and scoring it; past it the
	// service ranks by keywords and says so. Default 2s.
	SemanticTimeout time.Duration
	// MaxLimit is the largest limit a request may ask. Default 100.
	MaxLimit int
	// LowercaseQueries lower-cases semantic queries before embedding; the
	// default follows the model (an Embedder with Info() embedder.ModelInfo,
	// as the ONNX model has), else the store's recorded model.
	LowercaseQueries *bool
	// CosineWeight is the weight of cosine similarity in the hybrid score;
	// BM25 gets the rest. Default relevance.CosineWeight.
	CosineWeight float64
	// AuthorityPrior is what an SRD entity adds to its score when no book
	// is named (authorityPrior). Default relevance.AuthorityPrior;
	// negative: none.
	AuthorityPrior float64
	// QueryCache is how many query vectors are kept, by query text, so a
	// repeated question skips the model. Default 1024; negative disables.
	QueryCache int
	// Literal reads no filters from the words of questions (understand):
	// they are ranked by their words and meaning alone, for comparison.
	Literal bool
	// Pending reports messages on the stream not yet stored (Status).
	Pending func() uint64
	// IngestState reports ingest's sync and import state from the node's
	// NATS (Status); nil leaves it out.
	IngestState func(context.Context) *lkv1.NodeIngestState
	// Version is reported by Status.
	Version string
	// DataDir and ModelDir are reported by Status: where the node keeps
	// its files, as it was started.
	DataDir, ModelDir string
	Metrics           *Metrics
	Logger            *slog.Logger
}

// modelInfo is what an embedding model may tell about itself.
type modelInfo interface{ Info() embedder.ModelInfo }

// model returns what is known of the query model: from the Embedder if it
// says, else the store's record.
func (s *Service) model() embedder.ModelInfo {
	if mi, ok := s.emb.(modelInfo); ok {
		return mi.Info()
	}
	return s.store.Model()
}

// Service answers queries from a store. It is safe for concurrent use.
type Service struct {
	store *badgerstore.Store
	emb   Embedder
	opts  Options
	log   *slog.Logger
	cache *vectorCache
	snaps *snapshots
	// scratch holds *scratch: rankings' arrays, reused.
	scratch sync.Pool
}

// NewService returns a service reading store and embedding queries with emb
// (nil: keyword ranking only).
func NewService(store *badgerstore.Store, emb Embedder, opts *Options) *Service {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SemanticTimeout <= 0 {
		o.SemanticTimeout = DefaultSemanticTimeout
	}
	if o.CosineWeight <= 0 || o.CosineWeight > 1 {
		o.CosineWeight = relevance.CosineWeight
	}
	if o.AuthorityPrior == 0 {
		o.AuthorityPrior = relevance.AuthorityPrior
	}
	if o.QueryCache == 0 {
		o.QueryCache = 1024
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 100
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{store: store, emb: emb, opts: o, log: o.Logger, cache: newVectorCache(o.QueryCache), snaps: newSnapshots(),
		scratch: sync.Pool{New: func() any { return new(scratch) }}}
}

func checkText(field, s string, limit int) error {
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return invalid(field, "%d characters, at most %d allowed", n, limit)
	}
	return nil
}

func (s *Service) limit(field string, l uint32) (int, error) {
	if l == 0 {
		return DefaultLimit, nil
	}
	if int(l) > s.opts.MaxLimit {
		return 0, invalid(field, "%d is above the maximum of %d", l, s.opts.MaxLimit)
	}
	return int(l), nil
}

// values are a request field's values, with the field's name for
// errors.
type values struct {
	name string
	vals []string
}

// checkAll is checkValues over several fields, in order.
func checkAll(fields ...values) error {
	for _, f := range fields {
		if err := checkValues(f.name, f.vals); err != nil {
			return err
		}
	}
	return nil
}

func checkValues(field string, vals []string) error {
	if len(vals) > MaxFilterValues {
		return invalid(field, "%d values, at most %d allowed", len(vals), MaxFilterValues)
	}
	for _, v := range vals {
		if err := checkText(field, v, MaxNameLength); err != nil {
			return err
		}
	}
	return nil
}

// semanticQuery validates q and truncates it to MaxSemanticQuery
// characters, returning the warning to pass on.
func semanticQuery(field, q string) (string, string, error) {
	if err := checkText(field, q, MaxQueryInput); err != nil {
		return "", "", err
	}
	q = strings.TrimSpace(q)
	if utf8.RuneCountInString(q) <= MaxSemanticQuery {
		return q, "", nil
	}
	r := []rune(q)
	return string(r[:MaxSemanticQuery]), fmt.Sprintf("%s was %d characters long; only the first %d were used", field, len(r), MaxSemanticQuery), nil
}

// GetEntity returns one entity by key or URI.
func (s *Service) GetEntity(ctx context.Context, req *lkv1.GetEntityRequest) (*lkv1.GetEntityResponse, error) {
	if err := checkText("key", req.GetKey(), 1024); err != nil {
		return nil, err
	}
	key := strings.TrimSpace(lkv1.KeyFromURI(strings.TrimSpace(req.GetKey())))
	if key == "" {
		return nil, invalid("key", "required")
	}
	e, err := s.store.Get(ctx, key)
	if errors.Is(err, badgerstore.ErrNotFound) {
		return nil, fmt.Errorf("entity %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return &lkv1.GetEntityResponse{Entity: e, Uri: lkv1.EntityURI(key)}, nil
}

// ListDocuments lists the stored documents, largest first; or, when a
// limit or cursor asks for pages, by key (then source), so that a document
// keeps its place while imports change the counts.
func (s *Service) ListDocuments(ctx context.Context, req *lkv1.ListDocumentsRequest) (*lkv1.ListDocumentsResponse, error) {
	for _, src := range req.GetSources() {
		if src.Slug() == "" {
			return nil, invalid("sources", "unknown source %d", src)
		}
	}
	hash := requestHash(req, func(m proto.Message) {
		r := m.(*lkv1.ListDocumentsRequest)
		r.Cursor, r.Limit = "", 0
	})
	cur, err := decodeCursor(req.GetCursor(), hash)
	if err != nil {
		return nil, err
	}
	if cur != nil && cur.Source == "" {
		return nil, invalid("cursor", "was made for a different request; repeat the same arguments (only limit may change) or start again without a cursor")
	}
	if int(req.GetLimit()) > s.opts.MaxLimit {
		return nil, invalid("limit", "%d is above the maximum of %d", req.GetLimit(), s.opts.MaxLimit)
	}
	var docs []badgerstore.DocumentInfo
	err = s.store.View(ctx, func(v *badgerstore.View) error {
		docs = v.Documents()
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp := &lkv1.ListDocumentsResponse{}
	for _, d := range docs {
		if len(req.GetSources()) > 0 && !containsSource(req.GetSources(), d.Document.GetSource()) {
			continue
		}
		sum := &lkv1.DocumentSummary{Document: d.Document, EntityCount: uint64(d.Entities), Counts: map[string]uint64{}}
		for k, n := range d.Kinds {
			sum.Counts[k] = uint64(n)
		}
		resp.Documents = append(resp.Documents, sum)
	}
	resp.Total = uint64(len(resp.Documents))
	if cur == nil && req.GetLimit() == 0 {
		sortDocuments(resp.Documents)
		return resp, nil
	}
	less := func(a *lkv1.DocumentSummary, key, src string) int {
		if c := strings.Compare(a.GetDocument().GetKey(), key); c != 0 {
			return c
		}
		return strings.Compare(a.GetDocument().GetSource().Slug(), src)
	}
	slices.SortFunc(resp.Documents, func(a, b *lkv1.DocumentSummary) int {
		return less(a, b.GetDocument().GetKey(), b.GetDocument().GetSource().Slug())
	})
	if cur != nil {
		i := 0
		for i < len(resp.Documents) && less(resp.Documents[i], cur.Key, cur.Source) <= 0 {
			i++
		}
		resp.Documents = resp.Documents[i:]
	}
	if n := int(req.GetLimit()); n > 0 && len(resp.Documents) > n {
		resp.Documents = resp.Documents[:n]
		last := resp.Documents[n-1].GetDocument()
		resp.NextCursor = (&cursor{Query: hash, Key: last.GetKey(), Source: last.GetSource().Slug()}).encode()
	}
	return resp, nil
}

func containsSource(list []lkv1.Source, s lkv1.Source) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Status reports what the node holds.
func (s *Service) Status(ctx context.Context, _ *lkv1.StatusRequest) (*lkv1.StatusResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := s.store.Stats()
	m := s.store.Model()
	if m.Name == "" || m.Dimensions == 0 {
		m = s.model()
	}
	resp := &lkv1.StatusResponse{
		Entities:            uint64(st.Entities),
		Vectors:             uint64(st.Vectors),
		Counts:              map[string]uint64{},
		EmbeddingModel:      m.Name,
		EmbeddingDimensions: uint32(m.Dimensions),
		VectorBackend:       "embedded",
		SemanticAvailable:   s.emb != nil && st.Vectors > 0,
		Version:             s.opts.Version,
		DataDir:             s.opts.DataDir,
		ModelDir:            s.opts.ModelDir,
		Pid:                 uint32(os.Getpid()),
	}
	if idx := s.store.VectorIndex(); idx != nil {
		resp.VectorBackend = idx.Backend()
	}
	for k, n := range st.Kinds {
		resp.Counts[k] = uint64(n)
	}
	if !st.LastWrite.IsZero() {
		resp.LastWrite = timestamppb.New(st.LastWrite)
	}
	if s.opts.Pending != nil {
		resp.Pending = s.opts.Pending()
	}
	if s.opts.IngestState != nil {
		resp.IngestState = s.opts.IngestState(ctx)
	}
	return resp, nil
}

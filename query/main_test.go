package query_test

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/usetoonnx"
	"lorekeeper.dev/embedder/vectorbundle"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// The real snapshot, ingested once per test binary into a real Badger
// store: every query test reads it, none writes it.
var snap struct {
	once     sync.Once
	err      error
	dir      string
	store    *badgerstore.Store
	entities []*lkv1.Entity
	emb      query.Embedder // the real model, when available
}

func TestMain(m *testing.M) {
	code := m.Run()
	if snap.store != nil {
		_ = snap.store.Close()
	}
	if snap.dir != "" {
		_ = os.RemoveAll(snap.dir)
	}
	os.Exit(code)
}

// snapshotStore returns the store holding the whole Open5e snapshot.
func snapshotStore(t testing.TB) *badgerstore.Store {
	t.Helper()
	snap.once.Do(func() { snap.err = loadSnapshot() })
	if snap.err != nil {
		t.Fatalf("load snapshot: %v", snap.err)
	}
	return snap.store
}

func loadSnapshot() error {
	ctx := context.Background()
	es, err := open5e.SnapshotEntities(ctx)
	if err != nil {
		return err
	}
	snap.entities = es
	snap.dir, err = os.MkdirTemp("", "query-test-")
	if err != nil {
		return err
	}
	emb, info, err := testModel()
	if err != nil {
		return err
	}
	snap.emb = emb
	// Semantic ranking searches the vector index, as a node does.
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: info.Dimensions, Model: info.Name, Fields: badgerstore.PayloadFields()})
	if err != nil {
		return err
	}
	st, err := badgerstore.Open(snap.dir, idx, nil)
	if err != nil {
		return err
	}
	snap.store = st
	if emb != nil {
		if err := st.SetModel(ctx, info); err != nil {
			return err
		}
	}
	return ingest(ctx, st, emb, info, es)
}

// ingest writes es in batches, with vectors when emb is set: the bundled
// vectors (vectorbundle) when they are emb's, as a node takes them. The
// texts they lack (a text changed since `make vectors`) are cached across
// test runs in the user's cache directory, by model and text, since
// embedding the whole snapshot takes minutes on shared cores.
func ingest(ctx context.Context, st *badgerstore.Store, emb query.Embedder, info badgerstore.ModelInfo, es []*lkv1.Entity) error {
	var cache map[string][]float32
	var cachePath string
	bundled := bundledVectors(emb, info)
	if emb != nil {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cachePath = filepath.Join(dir, "lorekeeper-test", "vectors-"+info.Name+"-"+usetoonnx.ConverterID()[:12]+".gob")
		cache = readVectorCache(cachePath)
	}
	added := 0
	const batch = 256
	for i := 0; i < len(es); i += batch {
		part := es[i:min(i+batch, len(es))]
		vecs := make([][]float32, len(part))
		if emb != nil {
			var texts []string
			var idx []int
			for j, e := range part {
				text := embedderText(e, info.Lowercase)
				if bundled != nil {
					if v, ok := bundled.Lookup(vectorbundle.TextHash(text)); ok {
						vecs[j] = v
						continue
					}
				}
				if v, ok := cache[textKey(text)]; ok {
					vecs[j] = v
					continue
				}
				texts = append(texts, text)
				idx = append(idx, j)
			}
			if len(texts) > 0 {
				got, err := emb.Embed(ctx, texts)
				if err != nil {
					return fmt.Errorf("embed: %w", err)
				}
				for k, j := range idx {
					vecs[j] = got[k]
					cache[textKey(texts[k])] = got[k]
					added++
				}
			}
		}
		writes := make([]badgerstore.Write, len(part))
		for j, e := range part {
			writes[j] = badgerstore.Write{Entity: e, Vector: vecs[j]}
		}
		if err := st.Apply(ctx, writes); err != nil {
			return err
		}
	}
	if added > 0 {
		writeVectorCache(cachePath, cache)
	}
	return nil
}

// bundledVectors is the bundle the binary carries when emb's model made
// it, nil otherwise.
func bundledVectors(emb query.Embedder, info badgerstore.ModelInfo) *vectorbundle.Bundle {
	m, ok := emb.(interface{ Checksum() string })
	if !ok {
		return nil
	}
	b, err := vectorbundle.Bundled()
	if err != nil {
		return nil
	}
	if ok, _ := b.Matches(info.Name, m.Checksum()); !ok {
		return nil
	}
	return b
}

func textKey(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

func readVectorCache(path string) map[string][]float32 {
	m := map[string][]float32{}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	if err := gob.NewDecoder(f).Decode(&m); err != nil {
		return map[string][]float32{}
	}
	return m
}

func writeVectorCache(path string, m map[string][]float32) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	if err := gob.NewEncoder(f).Encode(m); err != nil {
		f.Close()
		return
	}
	if f.Close() == nil {
		_ = os.Rename(tmp, path)
	}
}

// dial serves svc over bufconn and returns a client.
func dial(t testing.TB, svc *query.Service, opts *query.ServerOptions) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := query.NewServer(svc, opts)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return conn
}

// client returns a query client over the snapshot, with the real model
// when there is one.
func client(t testing.TB) lkv1.QueryServiceClient {
	t.Helper()
	st := snapshotStore(t)
	return lkv1.NewQueryServiceClient(dial(t, query.NewService(st, snap.emb, nil), nil))
}

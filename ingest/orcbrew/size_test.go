package orcbrew_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// bucketBytes is what the bucket's stream holds: chunks of objects, even
// of a put that failed half-way, would show here.
func bucketBytes(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	st, err := obs.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// hideSize keeps the object store from learning a reader's length.
type hideSize struct{ io.Reader }

func TestPut_SizeLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	over := func(n int64) io.Reader { return hideSize{io.LimitReader(zeros{}, n)} }
	tests := []struct {
		name    string
		r       io.Reader
		opts    *orcbrew.PutOptions
		wantErr bool
	}{
		{name: "default limit, over", r: over(orcbrew.DefaultMaxSize + 1), wantErr: true},
		{name: "set limit, over", r: over(1025), opts: &orcbrew.PutOptions{MaxSize: 1024}, wantErr: true},
		{name: "set limit, at", r: over(1024), opts: &orcbrew.PutOptions{MaxSize: 1024}},
		{name: "set limit, over with known length", r: bytes.NewReader(make([]byte, 4096)), opts: &orcbrew.PutOptions{MaxSize: 1024}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := bucketBytes(t, js)
			name := strings.ReplaceAll(tt.name, " ", "_") + ".orcbrew"
			_, err := orcbrew.Put(t.Context(), js, name, tt.r, tt.opts)
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, orcbrew.ErrTooLarge) || !strings.Contains(err.Error(), "over the limit") {
				t.Fatalf("err = %v, want ErrTooLarge saying the limit", err)
			}
			if after := bucketBytes(t, js); after != before {
				t.Errorf("the bucket grew from %d to %d bytes for a refused object", before, after)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestPutFile_SizeLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	path := filepath.Join(t.TempDir(), "big.orcbrew")
	if err := os.WriteFile(path, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := orcbrew.PutFile(t.Context(), js, path, &orcbrew.PutOptions{MaxSize: 1024})
	if !errors.Is(err, orcbrew.ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1024") {
		t.Fatalf("err = %v, want ErrTooLarge naming the file and the limit", err)
	}
	if n := bucketBytes(t, js); n != 0 {
		t.Errorf("bucket holds %d bytes", n)
	}
}

// TestSyncDir_SizeLimit: the watched folder's file over the limit never
// reaches the bucket, and its import status says why, once.
func TestSyncDir_SizeLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	dir := t.TempDir()
	small := readSample(t, filepath.Join(good, "lorekeeper-mcp_sample.orcbrew"))
	limit := int64(len(small))
	if err := os.WriteFile(filepath.Join(dir, "ok.orcbrew"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.orcbrew"), append(small, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &orcbrew.MirrorOptions{Settle: time.Nanosecond, MaxSize: limit}
	res, err := orcbrew.SyncDir(t.Context(), js, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Put) != 1 || res.Put[0] != "ok.orcbrew" || len(res.Refused) != 1 || res.Refused[0] != "big.orcbrew" {
		t.Errorf("put %q, refused %q; want ok put and big refused", res.Put, res.Refused)
	}
	if n := bucketBytes(t, js); n > uint64(limit)+4096 {
		t.Errorf("bucket holds %d bytes, more than the one small file", n)
	}
	st := waitState(t, js, "big.orcbrew", func(s *lkv1.ImportState) bool { return s != nil })
	if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), "over the limit") || !strings.Contains(st.GetError(), "not put") {
		t.Errorf("status %v, want FAILED saying it is over the limit and not put", st)
	}
	res, err = orcbrew.SyncDir(t.Context(), js, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refused) != 0 || len(res.Put) != 0 {
		t.Errorf("second pass: put %q, refused %q; want nothing new", res.Put, res.Refused)
	}
}

// TestWatcher_DefaultSizeLimit: an object put around the limit (another
// client writing to the bucket) fails without being read, at the default
// limit too.
func TestWatcher_DefaultSizeLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, nil)
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := obs.Put(t.Context(), jetstream.ObjectMeta{Name: "huge.orcbrew"}, io.LimitReader(zeros{}, orcbrew.DefaultMaxSize+1))
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, js, "huge.orcbrew", digestIs(info.Digest))
	if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), "over the limit") {
		t.Errorf("status %v, want FAILED over the limit", st)
	}
}

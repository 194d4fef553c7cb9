package orcbrew

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Ext is the file extension of OrcBrew files.
const Ext = ".orcbrew"

// StatePrefix starts the KV key of every import status.
const StatePrefix = "import."

// StateKey is the key in the state bucket of the import status of object:
// "import.<token>", the token being the name with every character a KV key
// cannot hold replaced, plus a hash of the name so that two names never
// share a key.
func StateKey(object string) string {
	var b strings.Builder
	for _, r := range object {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	sum := sha256.Sum256([]byte(object))
	return StatePrefix + b.String() + "-" + hex.EncodeToString(sum[:4])
}

// Digest is the object store's digest of data: "SHA-256=<base64url>".
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}

// Put stores r in the OrcBrew bucket as object name; the watcher imports
// it. More than the size limit is refused (ErrTooLarge), and nothing of it
// stays in the bucket.
func Put(ctx context.Context, js jetstream.JetStream, name string, r io.Reader, opts *PutOptions) (*jetstream.ObjectInfo, error) {
	return put(ctx, js, jetstream.ObjectMeta{Name: name}, r, opts.maxSize())
}

func put(ctx context.Context, js jetstream.JetStream, meta jetstream.ObjectMeta, r io.Reader, limit int64) (*jetstream.ObjectInfo, error) {
	if strings.TrimSpace(meta.Name) == "" {
		return nil, errors.New("put orcbrew object: empty name")
	}
	obs, err := js.ObjectStore(ctx, ingest.OrcBrewBucket)
	if err != nil {
		return nil, fmt.Errorf("open object store %s: %w", ingest.OrcBrewBucket, err)
	}
	info, err := obs.Put(ctx, meta, &limitReader{r: r, name: meta.Name, max: limit})
	if err != nil {
		return nil, fmt.Errorf("put %s: %w", meta.Name, err)
	}
	return info, nil
}

// PutFile stores the file at path in the bucket under its base name and
// returns that name. A file over the size limit is refused before anything
// is stored.
func PutFile(ctx context.Context, js jetstream.JetStream, path string, opts *PutOptions) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("put orcbrew file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("put orcbrew file: %w", err)
	}
	if limit := opts.maxSize(); st.Size() > limit {
		return "", fmt.Errorf("put orcbrew file: %w", tooLarge(path, st.Size(), limit, false))
	}
	name := filepath.Base(path)
	if _, err := Put(ctx, js, name, f, opts); err != nil {
		return "", err
	}
	return name, nil
}

// PutDir stores every .orcbrew file directly inside dir and returns their
// object names, sorted. It stops at the first file it cannot put.
func PutDir(ctx context.Context, js jetstream.JetStream, dir string, opts *PutOptions) ([]string, error) {
	files, _, err := orcbrewFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("put orcbrew dir %s: no %s files in it", dir, Ext)
	}
	var names []string
	for _, p := range files {
		n, err := PutFile(ctx, js, p, opts)
		if err != nil {
			return names, err
		}
		names = append(names, n)
	}
	return names, nil
}

// orcbrewFiles lists the regular .orcbrew files directly inside dir,
// sorted, and the .orcbrew entries it leaves out, each with why: symbolic
// links (not followed: one could make the importer read any file the
// process can), named pipes and other entries that are no regular file
// (reading one could block forever), and hidden files.
func orcbrewFiles(dir string) ([]string, []skippedFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list orcbrew dir: %w", err)
	}
	var out []string
	var skipped []skippedFile
	for _, e := range ents {
		if !strings.EqualFold(filepath.Ext(e.Name()), Ext) {
			continue
		}
		why := ""
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			why = "a symbolic link, which is not followed: put the file itself in the folder"
		case t&fs.ModeNamedPipe != 0:
			why = "a named pipe (FIFO), not a file: put the file itself in the folder"
		case !t.IsRegular():
			why = "not a regular file (" + t.String() + "): put the file itself in the folder"
		case strings.HasPrefix(e.Name(), "."):
			why = "a hidden file (its name starts with a dot): rename it without the dot to import it"
		}
		if why != "" {
			skipped = append(skipped, skippedFile{name: e.Name(), why: why})
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	return out, skipped, nil
}

// skippedFile is an .orcbrew entry of a folder that is not imported, and
// why.
type skippedFile struct{ name, why string }

// Statuses returns the import status of every object, sorted by object name.
func Statuses(ctx context.Context, js jetstream.JetStream) ([]*lkv1.ImportState, error) {
	kv, err := js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("open key-value bucket %s: %w", ingest.StateBucket, err)
	}
	return statuses(ctx, kv)
}

func statuses(ctx context.Context, kv jetstream.KeyValue) ([]*lkv1.ImportState, error) {
	lister, err := kv.ListKeysFiltered(ctx, StatePrefix+">")
	if err != nil {
		return nil, fmt.Errorf("list import states: %w", err)
	}
	// The lister may repeat a key that is written during the listing.
	seen := map[string]bool{}
	var keys []string
	for k := range lister.Keys() {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	// The channel also closes when ctx ends; then the list is incomplete.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []*lkv1.ImportState
	for _, k := range keys {
		s, err := loadState(ctx, kv, k)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetObject() < out[j].GetObject() })
	return out, nil
}

// loadState reads one import status; nil when there is none.
func loadState(ctx context.Context, kv jetstream.KeyValue, key string) (*lkv1.ImportState, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	s := &lkv1.ImportState{}
	if err := proto.Unmarshal(e.Value(), s); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return s, nil
}

func saveState(ctx context.Context, kv jetstream.KeyValue, s *lkv1.ImportState) error {
	// Protobuf strings must be UTF-8; messages quote input, so make sure.
	s.Error = strings.ToValidUTF8(s.GetError(), "\uFFFD")
	for i, w := range s.GetWarnings() {
		s.Warnings[i] = strings.ToValidUTF8(w, "\uFFFD")
	}
	b, err := proto.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode import state of %s: %w", s.GetObject(), err)
	}
	if _, err := kv.Put(ctx, StateKey(s.GetObject()), b); err != nil {
		return fmt.Errorf("write import state of %s: %w", s.GetObject(), err)
	}
	return nil
}

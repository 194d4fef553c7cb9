package orcbrew

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// MirrorMetadata is the object metadata key naming the folder a mirrored
// object came from. MirrorDir deletes only objects that carry its folder
// here, so objects put by `lorekeeper import` or another mirror are safe.
const MirrorMetadata = "lorekeeper-mirror-dir"

// MirrorOptions tune MirrorDir and SyncDir. A nil *MirrorOptions means all
// defaults.
type MirrorOptions struct {
	// Interval between passes of MirrorDir (default 2s).
	Interval time.Duration
	// Settle is how long a file must go unmodified before it is put, so a
	// file still being written is not imported half-done (default 1s).
	Settle time.Duration
	// MaxSize is the largest file put, in bytes (default DefaultMaxSize).
	// A larger one is not put; its import status says why.
	MaxSize int64
	Logger  *slog.Logger
}

func (o *MirrorOptions) withDefaults() MirrorOptions {
	var r MirrorOptions
	if o != nil {
		r = *o
	}
	if r.Interval <= 0 {
		r.Interval = 2 * time.Second
	}
	if r.Settle <= 0 {
		r.Settle = time.Second
	}
	if r.MaxSize <= 0 {
		r.MaxSize = DefaultMaxSize
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// MirrorResult says what one SyncDir pass did.
type MirrorResult struct {
	Put, Deleted, Unchanged []string
	// Refused are the files newly found over the size limit (their import
	// status now says so); a file refused before is not listed again.
	Refused []string
	// Skipped are the .orcbrew entries newly found that are not imported
	// (symbolic links, named pipes, hidden files); their import status
	// says why, until they are gone.
	Skipped []string
	// Digested are the files read to digest them: new files, and those
	// whose size or modification time changed since the Mirror's last pass.
	Digested []string
	// Quiet: the folder and the bucket were as a pass that found them in
	// step left them (the same files, sizes and modification times; no
	// write to the bucket's stream since), so this pass did not list the
	// bucket; every file is Unchanged.
	Quiet bool
}

// MirrorDir keeps the bucket in step with the .orcbrew files directly
// inside dir until ctx ends: new and changed files are put, objects it put
// whose file is gone are deleted. It polls, which works on every file
// system (including bind mounts where change notifications do not), and a
// pass reads only the files whose size or modification time changed since
// the pass before. Errors of a pass are logged and the next pass tries
// again.
func MirrorDir(ctx context.Context, js jetstream.JetStream, dir string, opts *MirrorOptions) error {
	o := opts.withDefaults()
	m := NewMirror(js, dir, &o)
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		res, err := m.Sync(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			o.Logger.Warn("orcbrew: mirror pass failed", "dir", dir, "err", err)
		case len(res.Put)+len(res.Deleted) > 0:
			o.Logger.Info("orcbrew: mirrored folder", "dir", dir, "put", res.Put, "deleted", res.Deleted)
		}
		if res != nil && len(res.Refused) > 0 {
			o.Logger.Warn("orcbrew: files over the size limit not put in the bucket", "dir", dir, "files", res.Refused, "limit_bytes", o.MaxSize)
		}
		if res != nil && len(res.Skipped) > 0 {
			o.Logger.Warn("orcbrew: entries not imported (symbolic links, named pipes, hidden files; lorekeeper status says why)", "dir", dir, "entries", res.Skipped)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SyncDir makes one mirror pass over dir (see MirrorDir), digesting every
// file.
func SyncDir(ctx context.Context, js jetstream.JetStream, dir string, opts *MirrorOptions) (*MirrorResult, error) {
	return NewMirror(js, dir, opts).Sync(ctx)
}

// Mirror makes MirrorDir's passes over a folder. It remembers each file's
// size, modification time and digest, so a pass digests (reads whole) only
// the files where the first two changed: an unchanged folder of 96 MB
// costs a few stat calls a pass, not 96 MB of SHA-256. A file is digested
// only once it has settled, so a later write moves its modification time
// past the remembered one even on a file system with coarse timestamps.
// Nor does a pass list the bucket while neither the folder nor the
// bucket's stream changed: listing makes the stream server read the
// blocks the objects' records are in, tens of MB for a folder of tens of
// MB, where asking for the stream's last sequence reads nothing. A Mirror
// is not safe for concurrent use.
type Mirror struct {
	js     jetstream.JetStream
	dir    string
	o      MirrorOptions
	stamps map[string]fileStamp  // file path -> what its digest was made of
	obs    jetstream.ObjectStore // the bucket, once opened
	// inStep is the folder (folderStamp) when a pass last found it in step
	// with the bucket, whose stream's last sequence was then inStepSeq; ""
	// after a pass that changed or failed something.
	inStep    string
	inStepSeq uint64
	// skipped are the entries whose import status says why they are not
	// imported (orcbrewFiles), so that it goes when they do.
	skipped map[string]bool
}

// fileStamp is a file's digest and the size and modification time it
// was made at.
type fileStamp struct {
	size    int64
	modTime time.Time
	digest  string
}

// NewMirror returns a Mirror of dir into the bucket.
func NewMirror(js jetstream.JetStream, dir string, opts *MirrorOptions) *Mirror {
	return &Mirror{js: js, dir: dir, o: opts.withDefaults(), stamps: map[string]fileStamp{}, skipped: map[string]bool{}}
}

// Sync makes one pass.
func (m *Mirror) Sync(ctx context.Context) (*MirrorResult, error) {
	o, js, dir := &m.o, m.js, m.dir
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", dir, err)
	}
	files, skipped, err := orcbrewFiles(abs)
	if err != nil {
		return nil, err
	}
	folder, settled := folderStamp(files, o.Settle)
	for _, s := range skipped {
		folder += s.name + "\x00" + s.why + "\n"
	}
	obs, seq, err := m.bucket(ctx)
	if err != nil {
		return nil, err
	}
	if settled && folder == m.inStep && seq == m.inStepSeq {
		res := &MirrorResult{Quiet: true}
		for _, p := range files {
			res.Unchanged = append(res.Unchanged, filepath.Base(p))
		}
		return res, nil
	}
	m.inStep = ""
	objs, err := obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, fmt.Errorf("list object store %s: %w", ingest.OrcBrewBucket, err)
	}
	byName := make(map[string]*jetstream.ObjectInfo, len(objs))
	for _, info := range objs {
		byName[info.Name] = info
	}
	res := &MirrorResult{}
	local := map[string]bool{}
	var errs []error
	for _, p := range files {
		name := filepath.Base(p)
		local[name] = true
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if time.Since(st.ModTime()) < o.Settle {
			continue // still being written, perhaps: next pass
		}
		if st.Size() > o.MaxSize {
			refused, err := refuse(ctx, js, name, tooLarge(p, st.Size(), o.MaxSize, false))
			if err != nil {
				errs = append(errs, err)
			} else if refused {
				res.Refused = append(res.Refused, name)
			}
			continue
		}
		// Hash, then put, streaming the file each time: a pass holds no
		// file in memory.
		digest, err := m.digest(p, st, res)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if info, ok := byName[name]; ok && info.Digest == digest {
			res.Unchanged = append(res.Unchanged, name)
			continue
		}
		if err := putFile(ctx, js, p, jetstream.ObjectMeta{Name: name, Metadata: map[string]string{MirrorMetadata: abs}}, o.MaxSize); err != nil {
			if errors.Is(err, ErrTooLarge) { // it grew since the stat
				_, err = refuse(ctx, js, name, err)
			}
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		res.Put = append(res.Put, name)
	}
	errs = append(errs, m.skip(ctx, skipped, byName, res))
	for _, info := range objs {
		if local[info.Name] || info.Metadata[MirrorMetadata] != abs {
			continue
		}
		if err := obs.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			errs = append(errs, fmt.Errorf("delete %s: %w", info.Name, err))
			continue
		}
		res.Deleted = append(res.Deleted, info.Name)
	}
	for p := range m.stamps {
		if !local[filepath.Base(p)] {
			delete(m.stamps, p)
		}
	}
	if errors.Join(errs...) == nil && settled && len(res.Put)+len(res.Deleted)+len(res.Refused)+len(res.Skipped) == 0 {
		// seq was read before the listing: a write after it makes the
		// next pass list again.
		m.inStep, m.inStepSeq = folder, seq
	}
	return res, errors.Join(errs...)
}

// skip records in the import status of each skipped entry why it is not
// imported (once), and takes the status of an entry skipped before away
// once it is gone (and was never imported: what the bucket holds of a
// name stays the watcher's).
func (m *Mirror) skip(ctx context.Context, skipped []skippedFile, inBucket map[string]*jetstream.ObjectInfo, res *MirrorResult) error {
	var errs []error
	now := map[string]bool{}
	for _, s := range skipped {
		now[s.name] = true
		m.skipped[s.name] = true
		newly, err := refuse(ctx, m.js, s.name, errors.New(s.name+" is "+s.why))
		if err != nil {
			errs = append(errs, err)
		} else if newly {
			res.Skipped = append(res.Skipped, s.name)
		}
	}
	for name := range m.skipped {
		if now[name] {
			continue
		}
		if inBucket[name] == nil {
			if err := forgetRefused(ctx, m.js, name); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		delete(m.skipped, name)
	}
	return errors.Join(errs...)
}

// bucket returns the bucket and its stream's last sequence, which every
// put and delete moves on.
func (m *Mirror) bucket(ctx context.Context) (jetstream.ObjectStore, uint64, error) {
	if m.obs == nil {
		obs, err := m.js.ObjectStore(ctx, ingest.OrcBrewBucket)
		if err != nil {
			return nil, 0, fmt.Errorf("open object store %s: %w", ingest.OrcBrewBucket, err)
		}
		m.obs = obs
	}
	st, err := m.obs.Status(ctx)
	if err != nil {
		m.obs = nil // the bucket may have been deleted and made again
		return nil, 0, fmt.Errorf("status of object store %s: %w", ingest.OrcBrewBucket, err)
	}
	info, ok := st.(*jetstream.ObjectBucketStatus)
	if !ok {
		return nil, 0, fmt.Errorf("status of object store %s: %T has no stream state", ingest.OrcBrewBucket, st)
	}
	return m.obs, info.StreamInfo().State.LastSeq, nil
}

// folderStamp describes the files as the next pass can compare them: each
// one's name, size and modification time. settled is false when a file
// was modified within settle (a pass skips it, so a later pass must not
// take the folder for in step).
func folderStamp(files []string, settle time.Duration) (stamp string, settled bool) {
	var b strings.Builder
	settled = true
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return "", false
		}
		if time.Since(st.ModTime()) < settle {
			settled = false
		}
		fmt.Fprintf(&b, "%s\x00%d\x00%d\n", filepath.Base(p), st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), settled
}

// digest returns the file's digest: the one remembered when its size and
// modification time are as they were, else a fresh one (recorded in
// res.Digested).
func (m *Mirror) digest(path string, st os.FileInfo, res *MirrorResult) (string, error) {
	if s, ok := m.stamps[path]; ok && s.size == st.Size() && s.modTime.Equal(st.ModTime()) {
		return s.digest, nil
	}
	d, err := fileDigest(path)
	if err != nil {
		return "", err
	}
	res.Digested = append(res.Digested, filepath.Base(path))
	m.stamps[path] = fileStamp{size: st.Size(), modTime: st.ModTime(), digest: d}
	return d, nil
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return "SHA-256=" + base64.URLEncoding.EncodeToString(h.Sum(nil)), nil
}

func putFile(ctx context.Context, js jetstream.JetStream, path string, meta jetstream.ObjectMeta, limit int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	_, err = put(ctx, js, meta, f, limit)
	return err
}

// refuse records in name's import status that its file was not put, and
// why; the version already in the bucket, if any, stays imported. It
// reports whether the status is new (false: it already said so).
func refuse(ctx context.Context, js jetstream.JetStream, name string, reason error) (bool, error) {
	kv, err := js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return false, fmt.Errorf("open key-value bucket %s: %w", ingest.StateBucket, err)
	}
	prev, err := loadState(ctx, kv, StateKey(name))
	if err != nil {
		return false, err
	}
	msg := reason.Error() + "; not put in the bucket"
	if prev.GetStatus() == lkv1.ImportState_STATUS_FAILED && prev.GetError() == msg {
		return false, nil
	}
	st := &lkv1.ImportState{
		Object: name, Status: lkv1.ImportState_STATUS_FAILED, Error: msg, ImportedAt: timestamppb.Now(),
		// What the bucket holds of it stays, and so does the record of it.
		Digest: prev.GetDigest(), EntityKeys: prev.GetEntityKeys(), Books: prev.GetBooks(), Counts: prev.GetCounts(),
	}
	return true, saveState(ctx, kv, st)
}

// forgetRefused deletes name's import status when it says the file was
// refused and nothing of it was ever imported.
func forgetRefused(ctx context.Context, js jetstream.JetStream, name string) error {
	kv, err := js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return fmt.Errorf("open key-value bucket %s: %w", ingest.StateBucket, err)
	}
	prev, err := loadState(ctx, kv, StateKey(name))
	if err != nil || prev.GetStatus() != lkv1.ImportState_STATUS_FAILED || prev.GetDigest() != "" {
		return err
	}
	if err := kv.Delete(ctx, StateKey(name)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("delete import state of %s: %w", name, err)
	}
	return nil
}

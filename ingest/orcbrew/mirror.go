package orcbrew

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
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
	Logger *slog.Logger
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
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// MirrorResult says what one SyncDir pass did.
type MirrorResult struct {
	Put, Deleted, Unchanged []string
}

// MirrorDir keeps the bucket in step with the .orcbrew files directly
// inside dir until ctx ends: new and changed files are put, objects it put
// whose file is gone are deleted. It polls, which works on every file
// system (including bind mounts where change notifications do not).
// Errors of a pass are logged and the next pass tries again.
func MirrorDir(ctx context.Context, js jetstream.JetStream, dir string, opts *MirrorOptions) error {
	o := opts.withDefaults()
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		res, err := SyncDir(ctx, js, dir, &o)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			o.Logger.Warn("orcbrew: mirror pass failed", "dir", dir, "err", err)
		case len(res.Put)+len(res.Deleted) > 0:
			o.Logger.Info("orcbrew: mirrored folder", "dir", dir, "put", res.Put, "deleted", res.Deleted)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SyncDir makes one mirror pass over dir (see MirrorDir).
func SyncDir(ctx context.Context, js jetstream.JetStream, dir string, opts *MirrorOptions) (*MirrorResult, error) {
	o := opts.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", dir, err)
	}
	obs, err := js.ObjectStore(ctx, ingest.OrcBrewBucket)
	if err != nil {
		return nil, fmt.Errorf("open object store %s: %w", ingest.OrcBrewBucket, err)
	}
	objs, err := obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, fmt.Errorf("list object store %s: %w", ingest.OrcBrewBucket, err)
	}
	byName := make(map[string]*jetstream.ObjectInfo, len(objs))
	for _, info := range objs {
		byName[info.Name] = info
	}
	files, err := orcbrewFiles(abs)
	if err != nil {
		return nil, err
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
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", p, err))
			continue
		}
		if info, ok := byName[name]; ok && info.Digest == Digest(data) {
			res.Unchanged = append(res.Unchanged, name)
			continue
		}
		meta := jetstream.ObjectMeta{Name: name, Metadata: map[string]string{MirrorMetadata: abs}}
		if _, err := put(ctx, js, meta, bytes.NewReader(data)); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Put = append(res.Put, name)
	}
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
	return res, errors.Join(errs...)
}

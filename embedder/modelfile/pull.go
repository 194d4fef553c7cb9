package modelfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Errors from Pull.
var (
	// ErrNotPullable: the model is not published as files (USE-lite is
	// converted locally by `make model`).
	ErrNotPullable = errors.New("model is not downloadable")
	// ErrDownload: the source could not be reached or refused the request.
	ErrDownload = errors.New("download failed")
	// ErrChecksum: a downloaded file is not the pinned one.
	ErrChecksum = errors.New("checksum mismatch")
)

// DefaultBaseURL is where Pull downloads from: Hugging Face's file
// resolver. Machines without access to it cannot pull; they use USE-lite.
const DefaultBaseURL = "https://huggingface.co"

// PullOptions may be nil; zero fields take defaults.
type PullOptions struct {
	// BaseURL replaces DefaultBaseURL (a mirror; tests).
	BaseURL string
	// Client defaults to http.DefaultClient.
	Client *http.Client
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Pull downloads the named model's files into its directory under root,
// verifying each against its pinned size and sha256. Files already present
// with the right checksum are kept, so pulling again is cheap. A file is
// written beside its final name and renamed only once verified.
func Pull(ctx context.Context, name, root string, opts *PullOptions) error {
	if opts == nil {
		opts = &PullOptions{}
	}
	base := strings.TrimSuffix(opts.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	client := opts.Client
	if client == nil {
		client = http.DefaultClient
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}

	m, err := Lookup(name)
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	if len(m.Files) == 0 {
		return fmt.Errorf("pull %s: %w: %s", name, ErrNotPullable, m.Obtain)
	}
	if err := os.MkdirAll(m.Dir(root), 0o755); err != nil {
		return fmt.Errorf("pull %s: %w", name, err)
	}
	for _, f := range m.Files {
		dst := filepath.Join(m.Dir(root), f.Name)
		if sum, err := fileSHA256(dst); err == nil && sum == f.SHA256 {
			log.Info("model file present", "model", name, "file", dst)
			continue
		}
		url := fmt.Sprintf("%s/%s/resolve/%s/%s", base, miniLMRepo, miniLMRevision, f.Path)
		log.Info("downloading model file", "model", name, "url", url, "bytes", f.Size)
		if err := download(ctx, client, url, dst, f); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("pull %s: %w", name, err)
		}
	}
	return nil
}

func download(ctx context.Context, client *http.Client, url, dst string, f File) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDownload, url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %w (is the host reachable from here? without it, use the offline model use-lite from `make model`)", ErrDownload, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s: %s", ErrDownload, url, resp.Status)
	}

	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+f.Name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	// Read one byte past the pinned size so an oversized body is caught
	// without reading all of it.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, f.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDownload, url, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return fmt.Errorf("%w: %s: got %d bytes sha256 %s, want %d bytes sha256 %s", ErrChecksum, url, n, sum, f.Size, f.SHA256)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

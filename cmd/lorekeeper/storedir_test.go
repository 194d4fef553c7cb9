package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
)

// unprivilegedEnv marks the test binary re-run as an unprivileged user.
const unprivilegedEnv = "LOREKEEPER_TEST_UNPRIVILEGED_DIR"

// TestStoreDir_PermissionDenied: a nats/ or badger/ directory this user
// may not read (the row 11) is reported as permission denied with
// what to do, not as "storage directory is not a directory (set
// --nats-listen to a free port)". Permissions do not stop root, so as root
// the checks run in this test binary started again as nobody.
func TestStoreDir_PermissionDenied(t *testing.T) {
	if dir := os.Getenv(unprivilegedEnv); dir != "" {
		checkPermissionDenied(t, dir)
		return
	}
	base, err := os.MkdirTemp("", "lorekeeper-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	data := filepath.Join(base, "data")
	for _, d := range []string{filepath.Join(data, "nats", "jetstream"), filepath.Join(data, "badger")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{base, data} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Owned by whoever runs this, closed to everyone else.
	for _, d := range []string{filepath.Join(data, "nats"), filepath.Join(data, "badger")} {
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getuid() != 0 {
		// Another user's directories: here, ours closed to ourselves.
		for _, d := range []string{filepath.Join(data, "nats"), filepath.Join(data, "badger")} {
			if err := os.Chmod(d, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(d, 0o700) })
		}
		checkPermissionDenied(t, data)
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root, the check needs setpriv (util-linux) to run as nobody: %v", err)
	}
	bin := filepath.Join(base, "test.bin")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run=^TestStoreDir_PermissionDenied$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), unprivilegedEnv+"="+data, "HOME="+base)
	cmd.Dir = base
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestStoreDir_PermissionDenied") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func checkPermissionDenied(t *testing.T, data string) {
	t.Helper()
	_, err := embeddedNATS(data, "127.0.0.1:0", "", slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("embedded NATS started on a store it cannot read")
	}
	msg := err.Error()
	for _, bad := range []string{"not a directory", "--nats-listen"} {
		if strings.Contains(msg, bad) {
			t.Errorf("embedded NATS error says %q: %s", bad, msg)
		}
	}
	for _, want := range []string{filepath.Join(data, "nats"), "permission denied", "chown"} {
		if !strings.Contains(msg, want) {
			t.Errorf("embedded NATS error lacks %q: %s", want, msg)
		}
	}
	err = checkStoreDir(filepath.Join(data, "badger"))
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "chown") {
		t.Errorf("badger directory: %v, want permission denied and what to do", err)
	}
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestBadgerAdvice: each refusal of real Badger says what to do.
func TestBadgerAdvice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "badger")
	st, err := badgerstore.Open(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = badgerstore.Open(dir, nil, nil)
	if err == nil {
		t.Fatal("a second open of a store in use succeeded")
	}
	if got := badgerAdvice(err, dir).Error(); !strings.Contains(got, "another process") || !strings.Contains(got, "--data-dir") {
		t.Errorf("store in use: %s", got)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("not a manifest at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = badgerstore.Open(dir, nil, nil)
	if err == nil {
		t.Fatal("a store with a garbage MANIFEST opened")
	}
	if got := badgerAdvice(err, dir).Error(); !strings.Contains(got, "delete "+dir+" to rebuild it from the stream") {
		t.Errorf("damaged store: %s", got)
	}
	other := errors.New("nats: no responders")
	if got := badgerAdvice(other, dir); got != other {
		t.Errorf("an error not about the store: %v, want it unchanged", got)
	}
}

package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"lorekeeper.dev/embedder/badgerstore"
)

// vlogBytes is the size of the value-log files in dir, and their count.
func vlogBytes(t *testing.T, dir string) (int64, int) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n, len(paths)
}

// TestStore_CollectValueLog replaces every entity's document three times,
// so three quarters of the value log is garbage once compactions have
// dropped the old versions, and checks that CollectValueLog gives that
// space back with every entity still read as last written, also after a
// reopen; that it rewrites nothing when the disk has less than a file
// free; and that a closed store refuses.
func TestStore_CollectValueLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := &badgerstore.Options{Model: "test", ValueLogFileSize: 1 << 20}
	const n, rounds = 300, 4
	text := func(round, i int) string {
		return fmt.Sprintf("round %d spell %d ", round, i) + strings.Repeat(fmt.Sprintf("r%d-%d ", round, i), 300)
	}
	for round := range rounds {
		// A store per round: each Close flushes its memtable to a table.
		s, err := badgerstore.Open(dir, newIndex(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		var ws []badgerstore.Write
		for i := range n {
			e := spell(fmt.Sprint("s", i), fmt.Sprint("Spell ", i), int32(i%10), "evocation", fmt.Sprint("h", round, "-", i))
			e.Description = text(round, i)
			ws = append(ws, badgerstore.Write{Entity: e, Vector: []float32{1, float32(round), float32(i)}})
		}
		if err := s.Apply(ctx, ws); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Compactions find the replaced versions and tell the value log; force
	// them (a table in level 0 is already too many here), as a store's own
	// writes would in time.
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithNumVersionsToKeep(1).
		WithValueLogFileSize(1 << 20).WithNumLevelZeroTables(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flatten(1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A disk with less than a value-log file free: nothing is rewritten.
	full := true
	opts.FreeSpace = func(string) (uint64, error) {
		if full {
			return 512 << 10, nil
		}
		return 1 << 40, nil
	}
	s, err := badgerstore.Open(dir, newIndex(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	before, files := vlogBytes(t, dir)
	if files < rounds {
		t.Fatalf("%d value-log files of 1 MiB for %d bytes of documents, want several", files, rounds*n*len(text(0, 0)))
	}
	if got, err := s.CollectValueLog(ctx); err == nil || !strings.Contains(err.Error(), "free some space") || got != 0 {
		t.Errorf("CollectValueLog with 0.5 MiB free = %d, %v; want 0 and an error that says to free some space", got, err)
	}
	if b, _ := vlogBytes(t, dir); b != before {
		t.Errorf("value log %d -> %d bytes with the disk full, want unchanged", before, b)
	}
	full = false
	got, err := s.CollectValueLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := vlogBytes(t, dir)
	t.Logf("value log: %d files, %d bytes; %d rewritten, %d bytes after", files, before, got, after)
	if got == 0 || after > before*6/10 {
		t.Errorf("CollectValueLog rewrote %d files, value log %d -> %d bytes; want 40 %% or more freed (three quarters are replaced values; the file being written and files less than half garbage stay)", got, before, after)
	}
	check := func(s *badgerstore.Store) {
		t.Helper()
		for i := range n {
			e, err := s.Get(ctx, fmt.Sprint("open5e_v2:srd-2014:spell:s", i))
			if err != nil {
				t.Fatalf("entity %d: %v", i, err)
			}
			if e.GetDescription() != text(rounds-1, i) {
				t.Fatalf("entity %d: description %.20q..., want the last round's", i, e.GetDescription())
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectValueLog(ctx); !errors.Is(err, badgerstore.ErrClosed) {
		t.Errorf("CollectValueLog after Close = %v, want ErrClosed", err)
	}
	check(openStore(t, dir, newIndex(t)))
}

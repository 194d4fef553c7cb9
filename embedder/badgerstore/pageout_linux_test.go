package badgerstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// fileRSS is how many kB of the table (.sst) and value-log (.vlog) files
// in dir this process has resident, from /proc/self/smaps.
func fileRSS(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, inFile := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			inFile = len(fields) >= 6 && (strings.HasSuffix(line, ".sst") || strings.HasSuffix(line, ".vlog")) && strings.HasPrefix(fields[len(fields)-1], dir)
		case inFile && fields[0] == "Rss:":
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			kb += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kb
}

// TestStore_ReleaseFilePages reads a whole store through its mapped
// tables and value log, then releases their pages: the resident kilobytes
// of the files fall, and the store still reads every entity.
func TestStore_ReleaseFilePages(t *testing.T) {
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := badgerstore.Open(dir, newIndex(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	var ws []badgerstore.Write
	for i := range n {
		e := spell(fmt.Sprint("s", i), fmt.Sprint("Spell ", i), int32(i%10), "evocation", fmt.Sprint("h", i))
		e.Description = strings.Repeat(fmt.Sprintf("Words of spell %d, all different. ", i), 40)
		ws = append(ws, badgerstore.Write{Entity: e, Vector: []float32{1, 0, 0}})
	}
	if err := s.Apply(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // the memtable becomes a table
		t.Fatal(err)
	}

	s = openStore(t, dir, newIndex(t))
	readAll := func() int {
		t.Helper()
		read := 0
		if err := s.ForEach(ctx, func(*lkv1.Entity) error { read++; return nil }); err != nil {
			t.Fatal(err)
		}
		return read
	}
	readAll()
	before := fileRSS(t, dir)
	if before < 256 {
		t.Fatalf("after reading every entity the files hold %d kB resident; want the test to start from more", before)
	}
	if err := s.ReleaseFilePages(); err != nil {
		t.Fatal(err)
	}
	after := fileRSS(t, dir)
	t.Logf("files resident: %d kB before, %d kB after", before, after)
	if after > before/4 {
		t.Errorf("files resident after the release: %d kB of %d", after, before)
	}
	if got := readAll(); got != n {
		t.Errorf("read %d entities after the release, want %d", got, n)
	}
}

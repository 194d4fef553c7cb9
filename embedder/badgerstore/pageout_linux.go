package badgerstore

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseFilePages asks the kernel to take the pages of the store's table
// and value-log files out of the process's resident set. Badger reads both
// through memory maps, and a load (writing every value, then compacting
// every table) leaves all of them resident: 64 MiB of the bundled
// catalogue's store, a fifth of a node's resident set, while queries read a
// few documents each. The pages are clean copies of the files (or written
// back first): they stay in the page cache while memory allows and come
// back on the next read.
//
// MADV_PAGEOUT never changes what a range holds, so a file unmapped
// between reading the maps and the call costs nothing. Kernels before
// 5.4 do not know it: then nothing is released and nothing fails.
func (s *Store) ReleaseFilePages() error {
	if s.dir == "" {
		return nil // in memory: no files
	}
	dir, err := filepath.Abs(s.dir)
	if err != nil {
		return fmt.Errorf("release file pages: %w", err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return fmt.Errorf("release file pages: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		start, end, path, ok := mapsLine(sc.Text())
		if ext := filepath.Ext(path); !ok || ext != ".sst" && ext != ".vlog" || filepath.Dir(path) != dir {
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_PAGEOUT)
		if errno == unix.EINVAL {
			return nil // an older kernel
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("release file pages: read /proc/self/maps: %w", err)
	}
	return nil
}

// mapsLine parses a line of /proc/self/maps ("start-end perms offset dev
// inode path", the path padded with spaces and possibly holding some).
func mapsLine(line string) (start, end uintptr, path string, ok bool) {
	rest := line
	var fields [5]string
	for i := range fields {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			return 0, 0, "", false
		}
		fields[i], rest = rest[:j], rest[j:]
	}
	lo, hi, found := strings.Cut(fields[0], "-")
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if !found || err1 != nil || err2 != nil || b <= a {
		return 0, 0, "", false
	}
	return uintptr(a), uintptr(b), strings.TrimLeft(rest, " "), true
}

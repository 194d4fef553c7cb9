// Package storetest damages closed badgerstore stores, and fills the disk
// under open ones, the ways tests of the store, the replica that rebuilds
// it and the processes that hold it need.
package storetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"lorekeeper.dev/embedder/badgerstore"
)

// DamageEntity stores bytes that are no entity under one more document
// key of the closed store in dir, and records one more entity in its
// mark: the count agrees, the tables' checksums are right, and only a
// load that reads every entity finds the damage.
func DamageEntity(t *testing.T, dir string) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(txn *badger.Txn) error {
		it, err := txn.Get([]byte("m/stream"))
		if err != nil {
			return err
		}
		var m badgerstore.StreamMark
		if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
			return err
		}
		m.Entities++
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := txn.Set([]byte("m/stream"), b); err != nil {
			return err
		}
		return txn.Set([]byte("d/open5e_v2:srd-2014:spell:zz-garbled"), []byte{0xff, 0xff, 0xff})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// CutNewestValueLog truncates the newest value-log file of the closed
// store in dir to half its size, or deletes it (remove): the tables,
// their checksums and the entity count are untouched, and the values
// the file held read back empty.
func CutNewestValueLog(t *testing.T, dir string, remove bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no value-log file in %s (%v)", dir, err)
	}
	sort.Strings(files)
	newest := files[len(files)-1]
	if remove {
		if err := os.Remove(newest); err != nil {
			t.Fatal(err)
		}
		return
	}
	st, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(newest, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

package orcbrew_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5esnapshot"
	"lorekeeper.dev/ingest/orcbrew"
)

// officialKeys are the document keys of the bundled Open5e snapshot, v2
// and v1 (read from its documents endpoints), and the aliases the
// documents filter reads as the SRDs'.
func officialKeys(t *testing.T) []string {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"srd", "srd-5e"}
	for _, v := range []struct{ version, field string }{{"v2", "key"}, {"v1", "slug"}} {
		for n := 1; ; n++ {
			b, ok := h.File(fmt.Sprintf("%s/documents/page-%d.json", v.version, n))
			if !ok {
				break
			}
			var page struct{ Results []map[string]any }
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Results {
				keys = append(keys, r[v.field].(string))
			}
		}
	}
	if len(keys) < 30 {
		t.Fatalf("read %d document keys from the snapshot: %q", len(keys), keys)
	}
	return keys
}

// TestDecode_ReservedKeys (issue 49, row 11): a homebrew book named as an
// official document is keyed ("srd-2014" listed twice, and
// documents=["srd-2014"] returned the homebrew Wish beside the SRD's) gets
// its own key and a warning, for every official key; other books keep
// theirs.
func TestDecode_ReservedKeys(t *testing.T) {
	for _, key := range officialKeys(t) {
		for _, book := range []string{key, strings.ToUpper(key)} {
			f, err := orcbrew.Decode("b.orcbrew", []byte(`{"`+book+`" {:orcpub.dnd.e5/spells {:wish {:name "Wish" :level 9}}}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			e := f.Entities[0]
			if got := e.GetDocument().GetKey(); got != "homebrew-"+key || e.GetKey() != "orcbrew:homebrew-"+key+":spell:wish" || e.GetDocument().GetName() != book {
				t.Errorf("book %q: document %q (%q), entity %q; want keyed homebrew-%s, named as given", book, got, e.GetDocument().GetName(), e.GetKey(), key)
			}
			if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "official document") {
				t.Errorf("book %q: warnings %q, want one saying the key is an official document's", book, f.Warnings)
			}
		}
	}
	f, err := orcbrew.Decode("b.orcbrew", []byte(`{"My SRD 2014 Extras" {:orcpub.dnd.e5/spells {:wish {:name "Wish" :level 9}}}}`), nil)
	if err != nil || f.Entities[0].GetDocument().GetKey() != "my-srd-2014-extras" || len(f.Warnings) != 0 {
		t.Errorf("an unreserved book: %v, %q, %q", err, f.Entities[0].GetDocument().GetKey(), f.Warnings)
	}
}

package open5e_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

var updateNotice = flag.Bool("update-notice", false, "rewrite the documents in ../../NOTICE from the snapshot's records")

// noticeFile is the project's NOTICE, whose document list is rendered from
// the bundled snapshot's document records.
const noticeFile = "../../NOTICE"

// The list's bounds in NOTICE.
const (
	noticeStart = "Documents in the snapshot (Open5e API v2)"
	noticeEnd   = "Open Game Content:"
)

// snapshotCatalog is the catalog the bundled snapshot serves.
func snapshotCatalog(t *testing.T) *open5e.Catalog {
	t.Helper()
	cat, _ := snapshotCatalogAndPages(t)
	return cat
}

// snapshotCatalogAndPages is snapshotCatalog with the handler it was read
// from, for tests that also read the pack's pages.
func snapshotCatalogAndPages(t *testing.T) (*open5e.Catalog, *open5esnapshot.Handler) {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := open5e.NewClient(srv.URL, &open5e.ClientOptions{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := open5e.FetchCatalog(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return cat, h
}

// pageRecords are every record of an endpoint ("v1/spells") as the pack's
// pages give them.
func pageRecords(t *testing.T, h *open5esnapshot.Handler, endpoint string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for n := 1; ; n++ {
		b, ok := h.File(fmt.Sprintf("%s/page-%d.json", endpoint, n))
		if !ok {
			return out
		}
		var page struct{ Results []json.RawMessage }
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("%s page %d: %v", endpoint, n, err)
		}
		out = append(out, page.Results...)
	}
}

// NOTICE lists every document of the snapshot with its licences and the
// notice its records carry, as the records say it (go test -update-notice
// rewrites the list).
func TestNotice_everyDocumentFromItsRecords(t *testing.T) {
	cat := snapshotCatalog(t)
	want := cat.NoticeDocuments()
	b, err := os.ReadFile(noticeFile)
	if err != nil {
		t.Fatal(err)
	}
	notice := string(b)
	i, j := strings.Index(notice, noticeStart), strings.Index(notice, noticeEnd)
	if i < 0 || j < i {
		t.Fatalf("NOTICE has no %q ... %q section", noticeStart, noticeEnd)
	}
	if *updateNotice {
		notice = notice[:i] + want + "\n" + notice[j:]
		if err := os.WriteFile(noticeFile, []byte(notice), 0o644); err != nil {
			t.Fatal(err)
		}
		j = strings.Index(notice, noticeEnd)
	}
	if got := notice[i:j]; got != want+"\n" {
		t.Errorf("NOTICE's document list differs from the snapshot's records; run go test ./ingest/open5e -run TestNotice -update-notice\n got:\n%s\nwant:\n%s", got, want)
	}
	flat := strings.Join(strings.Fields(want), " ")
	docs := 0
	for _, d := range cat.Documents() {
		docs++
		line := "- " + d.GetKey() + ": " + d.GetName()
		if !strings.Contains(want, line) {
			t.Errorf("%s: no line %q", d.GetKey(), line)
		}
		for _, l := range d.GetLicenses() {
			if !strings.Contains(want, l) {
				t.Errorf("%s: licence %q not shown", d.GetKey(), l)
			}
		}
		if a := strings.Join(strings.Fields(d.GetAttribution()), " "); a != "" && !strings.Contains(flat, a) {
			t.Errorf("%s: its notice is not shown: %.80s", d.GetKey(), a)
		}
	}
	if docs == 0 {
		t.Fatal("no documents")
	}
}

// A v2 document borrows the OGL section 15 notice of its v1 twin, and
// where the twin's record names another licence both are said: Black Flag
// is CC-BY-4.0 by its v2 record and ORC by its v1 record.
func TestCatalog_licencesPerDocument(t *testing.T) {
	cat := snapshotCatalog(t)
	twinned := 0
	for _, v1 := range cat.Documents() {
		if v1.GetSource() != lkv1.Source_SOURCE_OPEN5E_V1 || len(cat.V2Twins(v1.GetKey())) == 0 {
			continue
		}
		v2 := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, cat.V2Twins(v1.GetKey())[0])
		twinned++
		if a := v1.GetAttribution(); a == "" || !strings.Contains(v2.GetAttribution(), a) {
			t.Errorf("%s: attribution %.60q lacks its v1 twin %s's %.60q", v2.GetKey(), v2.GetAttribution(), v1.GetKey(), a)
		}
		disagree := true
		for _, l := range v2.GetLicenses() {
			if l == v1.GetLicenses()[0] {
				disagree = false
			}
		}
		if note := v2.GetLicenseNote(); disagree != (note != "") || disagree && !(strings.Contains(note, v1.GetLicenses()[0]) && strings.Contains(note, v2.GetLicenses()[0])) {
			t.Errorf("%s: licences %v, v1 %s's %v; note %q", v2.GetKey(), v2.GetLicenses(), v1.GetKey(), v1.GetLicenses(), note)
		}
	}
	if twinned == 0 {
		t.Fatal("no twinned documents")
	}
	if a := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, "srd-2014").GetAttribution(); !strings.HasPrefix(a, open5e.SRDAttribution) {
		t.Errorf("srd-2014: attribution %.80q does not start with the SRD's CC-BY-4.0 attribution", a)
	}
	bf := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, "bfrd")
	if n := bf.GetLicenseNote(); !strings.Contains(n, "ORC") || !strings.Contains(n, "CC-BY-4.0") {
		t.Errorf("bfrd: licence note %q, want both ORC and CC-BY-4.0 said", n)
	}
	for _, k := range []string{"a5e-ag", "a5e-ddg", "a5e-gpg", "a5e-mm"} {
		if d := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, k); d.GetGameSystem() != "a5e" {
			t.Errorf("%s: game system %q, want a5e", k, d.GetGameSystem())
		}
	}
}

// Every document's permalink is an address a reader can open: one scheme,
// a host (the Tal'Dorei v1 record writes "https://https://").
func TestCatalog_permalinks(t *testing.T) {
	n := 0
	for _, d := range snapshotCatalog(t).Documents() {
		p := d.GetPermalink()
		if p == "" {
			continue
		}
		n++
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Contains(strings.TrimPrefix(p, u.Scheme+"://"), "://") || strings.Contains(u.Host, ":") {
			t.Errorf("%s: permalink %q", d.GetKey(), p)
		}
	}
	if n == 0 {
		t.Fatal("no document has a permalink")
	}
}

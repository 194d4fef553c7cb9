// Package open5esnapshot serves the bundled offline copy of the Open5e API.
//
// The snapshot (open5e.tar.zst, made from real API responses; see NOTICE) is
// embedded in the binary. Handler answers the way api.open5e.com does: the
// root and version indexes, every list endpoint with page and limit, the
// recorded filtered queries, details and the recorded error bodies, so the
// fetcher can run offline, and tests can run it against real pages.
package open5esnapshot

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"

	"lorekeeper.dev/ingest"
)

// tarball is a tar of the pack's open5e folder, compressed with zstd in
// long-distance mode (`make snapshot`): v1 and v2 repeat the same texts
// pages apart, far beyond gzip's 32 KB window, so zstd holds the whole
// pack in 2.7 MB where gzip -9 needs 7.4 MB. The decoder is in the binary
// anyway (NATS uses the same library).
//
//go:embed open5e.tar.zst
var tarball []byte

// Origin is the scheme and host the snapshot's responses were recorded at.
// Handler rewrites it to the origin of each request.
const Origin = "https://api.open5e.com"

// DefaultPageSize is the API's page size when the request gives no limit.
const DefaultPageSize = 50

// V1Warning is the Warning header the API sets on every v1 response.
const V1Warning = `299 - "Deprecated API: the Open5e v1 API is deprecated, use /v2/"`

// Handler serves the snapshot. It is safe for concurrent use.
//
// The unpacked pages take about 12 MB (each compressed on its own), while
// a node fetches them for a few seconds a day: with ReleaseWhenIdle the
// handler drops them when idle and unpacks them again (a fraction of a
// second) on the next request.
type Handler struct {
	mu    sync.Mutex
	p     *pages // nil: released
	users int    // requests in flight
	idle  time.Duration
	timer *time.Timer
}

// pages is the unpacked snapshot, and the lists read from it.
//
// Each file is kept compressed on its own and decompressed when read: the
// whole pack unpacked (47 MB) was live through a first load's fetch, a
// third of its heap, and the collector, working under the load's soft
// memory limit, ran ever more often. A handler that releases its pages
// when idle (a server: ReleaseWhenIdle) keeps only the list read last
// unpacked; others (tests reading lists in every order) keep them all.
type pages struct {
	files map[string][]byte // "v2/spells/page-1.json" -> body, s2

	mu     sync.Mutex
	lists  map[string]*list // "v2/spells" or "queries/v2/spells/<query>" -> records
	keep   int              // lists kept unpacked; 0: all
	recent []string         // the lists' folders, read last at the end
}

// keptLists is how many lists a server keeps unpacked: a resync reads one
// endpoint after the other, each page once (a list read again is unpacked
// again).
const keptLists = 1

// file is the snapshot's file name, uncompressed.
func (h *pages) file(name string) ([]byte, bool) {
	c, ok := h.files[name]
	if !ok {
		return nil, false
	}
	b, err := s2.Decode(nil, c)
	if err != nil {
		// Compressed by unpack a moment ago: only a bug gets here.
		return nil, false
	}
	return b, true
}

type list struct {
	records []json.RawMessage
	keys    []string // the record's key (v2) or slug (v1)
	docs    []string // the record's document key (v2) or slug (v1)
	err     error
}

// NewHandler unpacks the embedded snapshot.
func NewHandler() (*Handler, error) {
	p, err := unpackPages()
	if err != nil {
		return nil, err
	}
	return &Handler{p: p}, nil
}

func unpackPages() (*pages, error) {
	files, err := unpack(tarball)
	if err != nil {
		return nil, fmt.Errorf("unpack open5e snapshot: %w", err)
	}
	return &pages{files: files, lists: map[string]*list{}}, nil
}

// ReleaseWhenIdle makes h drop its unpacked pages after d without
// requests (d <= 0: keep them, the default).
func (h *Handler) ReleaseWhenIdle(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.idle = d
	h.armLocked()
}

// acquire returns the pages, unpacking them again if they were released,
// for one request; release ends it.
func (h *Handler) acquire() (*pages, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		p, err := unpackPages()
		if err != nil {
			return nil, err
		}
		h.p = p
	}
	if h.idle > 0 {
		h.p.mu.Lock() // the requests in flight read it under the pages' lock
		h.p.keep = keptLists
		h.p.mu.Unlock()
	}
	h.users++
	return h.p, nil
}

func (h *Handler) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users--
	h.armLocked()
}

// armLocked starts the idle countdown when nothing is in flight.
func (h *Handler) armLocked() {
	if h.idle <= 0 || h.users > 0 {
		return
	}
	if h.timer == nil {
		h.timer = time.AfterFunc(h.idle, h.drop)
		return
	}
	h.timer.Reset(h.idle)
}

// drop releases the pages unless a request took them meanwhile.
func (h *Handler) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.users == 0 {
		h.p = nil
	}
}

// unpack decompresses the tarball and returns its files, each compressed
// on its own, keyed by their path inside the open5e folder.
func unpack(b []byte) (map[string][]byte, error) {
	raw, err := ingest.UnpackBundle(b, "open5e")
	if err != nil {
		return nil, err
	}
	// S2 rather than zstd: 12 MB rather than 8.5, but compressed in 70 ms
	// rather than 150 (and 0.1 s rather than 2.7 under the race detector,
	// for every handler a test makes). Encode's buffer is as long as the
	// worst case: keep a copy.
	var buf []byte
	files := make(map[string][]byte, len(raw))
	for name, f := range raw {
		buf = s2.Encode(buf[:cap(buf)], f)
		files[name] = bytes.Clone(buf)
	}
	return files, nil
}

// File returns a file of the snapshot by its path inside the open5e folder,
// e.g. "v2/spells/page-1.json", unchanged.
func (h *Handler) File(name string) ([]byte, bool) {
	p, err := h.acquire()
	if err != nil {
		return nil, false
	}
	defer h.release()
	return p.file(name)
}

// Endpoints returns the list endpoints of version v ("v1" or "v2") that the
// snapshot holds, sorted.
func (h *Handler) Endpoints(v string) []string {
	p, err := h.acquire()
	if err != nil {
		return nil
	}
	defer h.release()
	return p.endpoints(v)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := h.acquire()
	if err != nil {
		writeJSON(w, r, http.StatusInternalServerError, []byte(`{"detail":"A server error occurred."}`))
		return
	}
	defer h.release()
	p.serveHTTP(w, r)
}

func (h *pages) endpoints(v string) []string {
	seen := map[string]bool{}
	for name := range h.files {
		parts := strings.Split(name, "/")
		if len(parts) == 3 && parts[0] == v && parts[2] == "page-1.json" {
			seen[parts[1]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

func (h *pages) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, r, http.StatusMethodNotAllowed, []byte(fmt.Sprintf(`{"detail":"Method \"%s\" not allowed."}`, r.Method)))
		return
	}
	p := r.URL.Path
	if !strings.HasSuffix(p, "/") {
		// Django's APPEND_SLASH.
		u := *r.URL
		u.Path = p + "/"
		http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
		return
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if parts[0] == "v1" {
		w.Header().Set("Warning", V1Warning)
	}
	switch {
	case p == "/":
		h.serveFile(w, r, "index.json")
	case len(parts) == 1 && (parts[0] == "v1" || parts[0] == "v2"):
		h.serveFile(w, r, parts[0]+"/index.json")
	case len(parts) == 2 && parts[0] == "v2" && parts[1] == "enums":
		h.serveFile(w, r, "v2/enums/index.json")
	case len(parts) == 2 && (parts[0] == "v1" || parts[0] == "v2"):
		h.serveList(w, r, parts[0], parts[1])
	case len(parts) == 3 && (parts[0] == "v1" || parts[0] == "v2"):
		h.serveDetail(w, r, parts[0], parts[1], parts[2])
	default:
		notFound(w, r)
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusNotFound, []byte(`{"detail":"Not found."}`))
}

func (h *pages) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	b, ok := h.file(name)
	if !ok {
		notFound(w, r)
		return
	}
	writeJSON(w, r, http.StatusOK, rewrite(b, r))
}

// requestOrigin is the scheme and host the client used.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// rewrite points the API's absolute links at the server the client asked,
// so that following next links stays on it.
func rewrite(b []byte, r *http.Request) []byte {
	return bytes.ReplaceAll(b, []byte(Origin), []byte(requestOrigin(r)))
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Vary", "Accept")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// load returns the records of a folder of pages ("v2/spells" or
// "queries/v2/spells/document__key=tob"), or nil when there is none.
func (h *pages) load(folder, version string) *list {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.lists[folder]; ok {
		h.touch(folder)
		return l
	}
	if _, ok := h.files[folder+"/page-1.json"]; !ok {
		return nil
	}
	l := &list{}
	for n := 1; ; n++ {
		b, ok := h.file(fmt.Sprintf("%s/page-%d.json", folder, n))
		if !ok {
			break
		}
		var page struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			l.err = fmt.Errorf("%s page %d: %w", folder, n, err)
			break
		}
		pos := 0
		for _, rec := range page.Results {
			// Keep the record as a slice of the page, which stays in
			// memory anyway, rather than as Unmarshal's copy: the copies
			// of the whole snapshot held 19 MB for the process's life.
			if i := bytes.Index(b[pos:], rec); i >= 0 {
				rec = json.RawMessage(b[pos+i : pos+i+len(rec) : pos+i+len(rec)])
				pos += i + len(rec)
			}
			key, doc := recordIdentity(rec, version)
			l.records = append(l.records, rec)
			l.keys = append(l.keys, key)
			l.docs = append(l.docs, doc)
		}
	}
	h.lists[folder] = l
	h.touch(folder)
	return l
}

// touch records folder's list as read last, and lets go of the list read
// longest ago beyond keep.
func (h *pages) touch(folder string) {
	for i, f := range h.recent {
		if f == folder {
			h.recent = append(h.recent[:i], h.recent[i+1:]...)
			break
		}
	}
	h.recent = append(h.recent, folder)
	if h.keep > 0 && len(h.recent) > h.keep {
		delete(h.lists, h.recent[0])
		h.recent = h.recent[1:]
	}
}

// recordIdentity reads a record's key and document key: v2 "key" and
// "document" (an object with a key, or the key itself); v1 "slug" and
// "document__slug".
func recordIdentity(rec json.RawMessage, version string) (key, doc string) {
	var v struct {
		Key      string          `json:"key"`
		Slug     string          `json:"slug"`
		DocSlug  string          `json:"document__slug"`
		Document json.RawMessage `json:"document"`
	}
	if json.Unmarshal(rec, &v) != nil {
		return "", ""
	}
	if version == "v1" {
		return v.Slug, v.DocSlug
	}
	var s string
	if json.Unmarshal(v.Document, &s) == nil {
		return v.Key, s
	}
	var d struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(v.Document, &d)
	return v.Key, d.Key
}

// pagingParams are the query parameters that are not filters.
var pagingParams = map[string]bool{"page": true, "limit": true, "format": true}

// documentFilters are the document filters each version's endpoints
// support. django-filter ignores every other parameter.
var documentFilters = map[string]map[string]bool{
	"v1": {"document__slug": true, "document__slug__in": true, "document__slug__iexact": true},
	"v2": {"document__key": true, "document__key__in": true, "document__key__iexact": true},
}

// unsupportedFilters lists the endpoints whose filter set lacks a document
// filter the others have (MANIFEST: /v2/items/ has only __in and __iexact).
var unsupportedFilters = map[string]bool{"v2/items:document__key": true}

func (h *pages) serveList(w http.ResponseWriter, r *http.Request, version, endpoint string) {
	base := h.load(version+"/"+endpoint, version)
	if base == nil {
		notFound(w, r)
		return
	}
	if base.err != nil {
		writeJSON(w, r, http.StatusInternalServerError, []byte(`{"detail":"A server error occurred."}`))
		return
	}
	q := r.URL.Query()
	filters := url.Values{}
	for k, vs := range q {
		if pagingParams[k] || !documentFilters[version][k] || unsupportedFilters[version+"/"+endpoint+":"+k] {
			continue
		}
		filters[k] = vs
	}
	records, err := h.filter(base, version, endpoint, filters)
	if err != nil {
		writeJSON(w, r, http.StatusInternalServerError, []byte(`{"detail":"A server error occurred."}`))
		return
	}

	size := DefaultPageSize
	if s := q.Get("limit"); s != "" {
		// DRF falls back to the default page size on a bad limit.
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			size = n
		}
	}
	pages := max(1, (len(records)+size-1)/size)
	page := 1
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if s == "last" {
			n, err = pages, nil
		}
		if err != nil || n < 1 || n > pages {
			writeJSON(w, r, http.StatusNotFound, []byte(`{"detail":"Invalid page."}`))
			return
		}
		page = n
	}
	lo := min((page-1)*size, len(records))
	hi := min(lo+size, len(records))

	self := requestOrigin(r) + "/" + version + "/" + endpoint + "/"
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Del("page")
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return self
		}
		return self + "?" + v.Encode()
	}
	var buf bytes.Buffer
	buf.WriteString(`{"count":`)
	buf.WriteString(strconv.Itoa(len(records)))
	buf.WriteString(`,"next":`)
	writeLink(&buf, page < pages, func() string { return link(page + 1) })
	buf.WriteString(`,"previous":`)
	writeLink(&buf, page > 1, func() string { return link(page - 1) })
	buf.WriteString(`,"results":[`)
	for i, rec := range records[lo:hi] {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(rec)
	}
	buf.WriteString("]}")
	writeJSON(w, r, http.StatusOK, rewrite(buf.Bytes(), r))
}

func writeLink(buf *bytes.Buffer, ok bool, link func() string) {
	if !ok {
		buf.WriteString("null")
		return
	}
	b, _ := json.Marshal(link())
	// DRF does not escape these characters; json.Marshal would.
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	buf.Write(b)
}

// filter applies the document filters. A recorded query folder with exactly
// these filters is served as recorded; otherwise the snapshot's own records
// are filtered by their document.
func (h *pages) filter(base *list, version, endpoint string, filters url.Values) ([]json.RawMessage, error) {
	if len(filters) == 0 {
		return base.records, nil
	}
	if len(filters) == 1 {
		for k, vs := range filters {
			if l := h.load("queries/"+version+"/"+endpoint+"/"+k+"="+vs[len(vs)-1], version); l != nil {
				return l.records, l.err
			}
		}
	}
	var out []json.RawMessage
	for i, rec := range base.records {
		if matchesDocument(base.docs[i], filters) {
			out = append(out, rec)
		}
	}
	return out, nil
}

func matchesDocument(doc string, filters url.Values) bool {
	for k, vs := range filters {
		want := vs[len(vs)-1] // django reads the last value
		switch {
		case strings.HasSuffix(k, "__in"):
			found := false
			for _, w := range strings.Split(want, ",") {
				if w == doc {
					found = true
				}
			}
			if !found {
				return false
			}
		case strings.HasSuffix(k, "__iexact"):
			if !strings.EqualFold(doc, want) {
				return false
			}
		default:
			if doc != want {
				return false
			}
		}
	}
	return true
}

// modelNames are the names the API uses in its "No X matches" errors.
var modelNames = map[string]string{
	"spells": "Spell", "creatures": "Creature", "monsters": "Monster", "items": "Item",
	"magicitems": "MagicItem", "weapons": "Weapon", "armor": "Armor", "classes": "CharacterClass",
	"species": "Species", "races": "Race", "backgrounds": "Background", "feats": "Feat",
	"conditions": "Condition", "rules": "Rule", "rulesets": "RuleSet", "documents": "Document",
}

func (h *pages) serveDetail(w http.ResponseWriter, r *http.Request, version, endpoint, key string) {
	if b, ok := h.file("_detail/" + version + "/" + endpoint + "/" + key + "/index.json"); ok {
		writeJSON(w, r, http.StatusOK, rewrite(b, r))
		return
	}
	l := h.load(version+"/"+endpoint, version)
	if l == nil {
		notFound(w, r)
		return
	}
	for i, k := range l.keys {
		if k == key {
			writeJSON(w, r, http.StatusOK, rewrite(l.records[i], r))
			return
		}
	}
	model, ok := modelNames[endpoint]
	if !ok {
		model = strings.TrimSuffix(strings.ToUpper(endpoint[:1])+endpoint[1:], "s")
	}
	writeJSON(w, r, http.StatusNotFound, []byte(`{"detail":"No `+model+` matches the given query."}`))
}

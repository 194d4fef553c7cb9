package open5esnapshot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"lorekeeper.dev/ingest/open5esnapshot"
)

func newServer(t *testing.T) (*open5esnapshot.Handler, *httptest.Server) {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

func get(t *testing.T, u string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func file(t *testing.T, h *open5esnapshot.Handler, name string) []byte {
	t.Helper()
	b, ok := h.File(name)
	if !ok {
		t.Fatalf("snapshot has no %s", name)
	}
	return b
}

// The handler rebuilds every page from the records; with the default page
// size it must reproduce the recorded pages byte for byte (links aside).
func TestHandler_pagesEqualRecorded(t *testing.T) {
	h, srv := newServer(t)
	for _, v := range []string{"v1", "v2"} {
		for _, ep := range h.Endpoints(v) {
			for n := 1; ; n++ {
				want, ok := h.File(fmt.Sprintf("%s/%s/page-%d.json", v, ep, n))
				if !ok {
					break
				}
				want = []byte(strings.ReplaceAll(string(want), open5esnapshot.Origin, srv.URL))
				u := fmt.Sprintf("%s/%s/%s/", srv.URL, v, ep)
				if n > 1 {
					u += fmt.Sprintf("?page=%d", n)
				}
				status, _, got := get(t, u)
				if status != http.StatusOK || string(got) != string(want) {
					t.Fatalf("GET %s: status %d, body differs from the recorded page (got %.200s, want %.200s)", u, status, got, want)
				}
			}
		}
	}
}

type page struct {
	Count    int               `json:"count"`
	Next     *string           `json:"next"`
	Previous *string           `json:"previous"`
	Results  []json.RawMessage `json:"results"`
}

func keysOf(t *testing.T, recs []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		var v struct{ Key, Slug string }
		if err := json.Unmarshal(r, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v.Key+v.Slug)
	}
	return out
}

// walk follows next links from u and returns every record and the pages.
func walk(t *testing.T, srvURL, u string) ([]json.RawMessage, []page) {
	t.Helper()
	var recs []json.RawMessage
	var pages []page
	for u != "" {
		if !strings.HasPrefix(u, srvURL) {
			t.Fatalf("link %s leaves the test server %s", u, srvURL)
		}
		status, _, b := get(t, u)
		if status != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", u, status, b)
		}
		var p page
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		pages = append(pages, p)
		recs = append(recs, p.Results...)
		u = ""
		if p.Next != nil {
			u = *p.Next
		}
		if len(pages) > 5000 {
			t.Fatal("too many pages")
		}
	}
	return recs, pages
}

func TestHandler_limitRepaginates(t *testing.T) {
	_, srv := newServer(t)
	all, _ := walk(t, srv.URL, srv.URL+"/v2/spells/")
	for _, limit := range []int{1, 7, 50, 1000, 5000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			if limit == 1 && testing.Short() {
				t.Skipf("%d requests", len(all))
			}
			got, pages := walk(t, srv.URL, fmt.Sprintf("%s/v2/spells/?limit=%d", srv.URL, limit))
			if g, w := strings.Join(keysOf(t, got), ","), strings.Join(keysOf(t, all), ","); g != w {
				t.Errorf("records with limit %d differ from the default pages", limit)
			}
			if want := (len(all) + limit - 1) / limit; len(pages) != want {
				t.Errorf("pages: got %d, want %d", len(pages), want)
			}
			if len(pages) > 1 && !strings.Contains(*pages[0].Next, fmt.Sprintf("limit=%d", limit)) {
				t.Errorf("next %q does not carry the limit", *pages[0].Next)
			}
			if pages[0].Count != len(all) {
				t.Errorf("count: got %d, want %d", pages[0].Count, len(all))
			}
		})
	}
}

func TestHandler_errors(t *testing.T) {
	h, srv := newServer(t)
	var index []struct {
		Request string
		Status  int
		File    string
	}
	if err := json.Unmarshal(file(t, h, "_errors/INDEX.json"), &index); err != nil {
		t.Fatal(err)
	}
	if len(index) == 0 {
		t.Fatal("no recorded errors")
	}
	for _, e := range index {
		u := strings.Replace(e.Request, open5esnapshot.Origin, srv.URL, 1)
		status, _, body := get(t, u)
		if want := file(t, h, "_errors/"+e.File); status != e.Status || string(body) != string(want) {
			t.Errorf("GET %s: got %d %s, want %d %s", u, status, body, e.Status, want)
		}
	}
	var first page
	if err := json.Unmarshal(file(t, h, "v2/spells/page-1.json"), &first); err != nil {
		t.Fatal(err)
	}
	pastLast := fmt.Sprintf("page=%d", (first.Count+open5esnapshot.DefaultPageSize-1)/open5esnapshot.DefaultPageSize+1)
	for _, q := range []string{"page=0", "page=-1", "page=abc", pastLast} {
		status, _, body := get(t, srv.URL+"/v2/spells/?"+q)
		if status != http.StatusNotFound || string(body) != `{"detail":"Invalid page."}` {
			t.Errorf("?%s: got %d %s", q, status, body)
		}
	}
	if status, _, _ := get(t, srv.URL+"/v2/nothing-here/"); status != http.StatusNotFound {
		t.Errorf("unknown endpoint: got %d, want 404", status)
	}
}

func TestHandler_detail(t *testing.T) {
	h, srv := newServer(t)
	for _, p := range []string{"v2/spells/srd_fireball", "v1/monsters/goblin", "v2/items/srd_shortsword"} {
		status, _, got := get(t, srv.URL+"/"+p+"/")
		want := strings.ReplaceAll(string(file(t, h, "_detail/"+p+"/index.json")), open5esnapshot.Origin, srv.URL)
		if status != http.StatusOK || string(got) != want {
			t.Errorf("GET /%s/: got %d %.100s", p, status, got)
		}
	}
	// Not recorded as a detail: served from the list.
	status, _, got := get(t, srv.URL+"/v2/creatures/srd_aboleth/")
	var rec struct{ Key, Name string }
	if err := json.Unmarshal(got, &rec); status != http.StatusOK || err != nil || rec.Key != "srd_aboleth" || rec.Name != "Aboleth" {
		t.Errorf("GET /v2/creatures/srd_aboleth/: got %d %+v %v", status, rec, err)
	}
}

func TestHandler_filters(t *testing.T) {
	h, srv := newServer(t)
	var index []struct {
		Request, Folder string
		Count, Pages    int
	}
	if err := json.Unmarshal(file(t, h, "queries/INDEX.json"), &index); err != nil {
		t.Fatal(err)
	}
	for _, q := range index {
		t.Run(q.Folder, func(t *testing.T) {
			u := strings.Replace(q.Request, open5esnapshot.Origin, srv.URL, 1)
			recs, pages := walk(t, srv.URL, u)
			if len(recs) != q.Count || len(pages) != q.Pages {
				t.Errorf("got %d records on %d pages, want %d on %d", len(recs), len(pages), q.Count, q.Pages)
			}
			for n := range pages {
				want := strings.ReplaceAll(string(file(t, h, fmt.Sprintf("queries/%s/page-%d.json", q.Folder, n+1))), open5esnapshot.Origin, srv.URL)
				b, _ := json.Marshal(pages[n])
				var w page
				_ = json.Unmarshal([]byte(want), &w)
				wb, _ := json.Marshal(w)
				if string(b) != string(wb) {
					t.Errorf("page %d differs from the recorded one", n+1)
				}
			}
			// The same filter computed from the records, spelled so that
			// no recorded folder matches it, gives the same records.
			name, value, _ := strings.Cut(strings.Split(q.Folder, "/")[2], "=")
			alt := fmt.Sprintf("%s/%s/%s/?%s__iexact=%s", srv.URL, strings.Split(q.Folder, "/")[0], strings.Split(q.Folder, "/")[1], name, strings.ToUpper(value))
			if strings.HasSuffix(name, "__in") {
				alt = fmt.Sprintf("%s/%s/%s/?%s=%s", srv.URL, strings.Split(q.Folder, "/")[0], strings.Split(q.Folder, "/")[1], name, "x,"+value)
			}
			got, _ := walk(t, srv.URL, alt)
			if g, w := strings.Join(keysOf(t, got), ","), strings.Join(keysOf(t, recs), ","); g != w {
				t.Errorf("%s: computed filter gives %d records, recorded %d", alt, len(got), len(recs))
			}
		})
	}
	// django-filter ignores what an endpoint does not support. The wanted
	// counts are the recorded pages' records, counted by their document.
	count := func(endpoint, doc string) int {
		n := 0
		for p := 1; ; p++ {
			b, ok := h.File(fmt.Sprintf("v2/%s/page-%d.json", endpoint, p))
			if !ok {
				return n
			}
			var pg struct {
				Results []struct {
					Document struct{ Key string }
				}
			}
			if err := json.Unmarshal(b, &pg); err != nil {
				t.Fatal(err)
			}
			for _, r := range pg.Results {
				if doc == "" || r.Document.Key == doc {
					n++
				}
			}
		}
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"/v2/items/?document__key=srd-2014", count("items", "")},
		{"/v2/items/?document__key__in=srd-2014", count("items", "srd-2014")},
		{"/v2/spells/?colour=blue", count("spells", "")},
		{"/v2/conditions/?document__key=srd-2014", count("conditions", "srd-2014")},
	} {
		recs, _ := walk(t, srv.URL, srv.URL+c.query)
		if len(recs) != c.want {
			t.Errorf("%s: got %d records, want %d", c.query, len(recs), c.want)
		}
	}
}

func TestHandler_indexesAndHeaders(t *testing.T) {
	_, srv := newServer(t)
	for _, p := range []string{"/", "/v1/", "/v2/"} {
		status, hdr, body := get(t, srv.URL+p)
		var idx map[string]string
		if err := json.Unmarshal(body, &idx); status != http.StatusOK || err != nil || len(idx) == 0 {
			t.Fatalf("GET %s: %d %v", p, status, err)
		}
		for k, v := range idx {
			if !strings.HasPrefix(v, srv.URL+"/") {
				t.Errorf("GET %s: %s links to %s, not the test server", p, k, v)
			}
		}
		if got, want := hdr.Get("Warning") != "", p == "/v1/"; got != want {
			t.Errorf("GET %s: Warning header present %v, want %v", p, got, want)
		}
	}
	_, hdr, _ := get(t, srv.URL+"/v1/spells/")
	if !strings.HasPrefix(hdr.Get("Warning"), "299 ") {
		t.Errorf("v1 Warning: got %q", hdr.Get("Warning"))
	}
	status, _, body := get(t, srv.URL+"/v2/enums/")
	if status != http.StatusOK || !strings.HasPrefix(string(body), "[") {
		t.Errorf("GET /v2/enums/: %d %.50s", status, body)
	}
	// Django appends the slash.
	resp, err := http.Get(srv.URL + "/v2/spells?page=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/v2/spells/" || resp.Request.URL.RawQuery != "page=2" || resp.StatusCode != http.StatusOK {
		t.Errorf("redirect: ended at %s with %d", resp.Request.URL, resp.StatusCode)
	}
}

func recordedFile(t *testing.T, name string) []byte {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	return file(t, h, name)
}

func TestStart(t *testing.T) {
	s, err := open5esnapshot.Start()
	if err != nil {
		t.Fatal(err)
	}
	status, _, body := get(t, s.URL+"/v2/documents/")
	var p, recorded page
	_ = json.Unmarshal(recordedFile(t, "v2/documents/page-1.json"), &recorded)
	if err := json.Unmarshal(body, &p); status != http.StatusOK || err != nil || p.Count != recorded.Count || p.Count == 0 {
		t.Errorf("GET /v2/documents/: %d count %d (recorded %d) %v", status, p.Count, recorded.Count, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL + "/"); err == nil {
		t.Error("server still answers after Close")
	}
	u, stop, err := open5esnapshot.Serve()
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := get(t, u+"/v2/"); status != http.StatusOK {
		t.Errorf("Serve: GET /v2/: %d", status)
	}
	stop()
	if _, err := http.Get(u + "/"); err == nil {
		t.Error("Serve: server still answers after stop")
	}
	if !strings.Contains(open5esnapshot.Notice, "Creative Commons Attribution 4.0") {
		t.Error("Notice lacks the SRD attribution")
	}
}

// TestHandler_releaseWhenIdle: an idle handler drops its pages, never
// while a request is in flight, and serves the same bytes after
// unpacking them again.
func TestHandler_releaseWhenIdle(t *testing.T) {
	h, srv := newServer(t)
	const idle = 50 * time.Millisecond
	_, _, before := get(t, srv.URL+"/v2/spells/?page=3")
	h.ReleaseWhenIdle(idle)
	waitUnpacked := func(want bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); h.Unpacked() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Unpacked() = %v after 10 s, want %v", !want, want)
			}
		}
	}
	waitUnpacked(false)
	code, _, after := get(t, srv.URL+"/v2/spells/?page=3")
	if code != http.StatusOK || string(after) != string(before) {
		t.Fatalf("after release: status %d, body equal %v; want 200 and the same page", code, string(after) == string(before))
	}
	if b, ok := h.File("v2/spells/page-1.json"); !ok || len(b) == 0 {
		t.Error("File after release: no page")
	}
	waitUnpacked(false)

	// A request in flight keeps the pages however long it takes, also
	// when an earlier one started the idle countdown.
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v2/spells/?page=1", nil))
	w := &blockingWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), unblock: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		req := httptest.NewRequest(http.MethodGet, "/v2/spells/?page=3", nil)
		req.Host = strings.TrimPrefix(srv.URL, "http://") // the links name it
		h.ServeHTTP(w, req)
	}()
	<-w.writing
	time.Sleep(5 * idle)
	if !h.Unpacked() {
		t.Error("the pages were released while a request was being served")
	}
	close(w.unblock)
	<-served
	if w.Body.String() != string(before) {
		t.Error("the request served while idle time passed got a different page")
	}
	waitUnpacked(false)
}

// blockingWriter blocks its first Write until unblock is closed, after
// closing writing.
type blockingWriter struct {
	*httptest.ResponseRecorder
	writing, unblock chan struct{}
	once             sync.Once
}

func (w *blockingWriter) Write(b []byte) (int, error) {
	w.once.Do(func() {
		close(w.writing)
		<-w.unblock
	})
	return w.ResponseRecorder.Write(b)
}

// TestStart_bounds (issue 49, row 12): the listener of Start refuses a
// Host that is not loopback, as the other listeners do, and serves at most
// MaxPageSize records a page however many are asked for: twenty requests
// for every creature at once all get bounded pages.
func TestStart_bounds(t *testing.T) {
	s, err := open5esnapshot.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/v2/", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example: %d, want 403", resp.StatusCode)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			status, _, body := get(t, s.URL+"/v2/creatures/?limit=1000000")
			var p page
			if err := json.Unmarshal(body, &p); err != nil || status != http.StatusOK {
				t.Errorf("limit=1000000: %d %v", status, err)
				return
			}
			if len(p.Results) != open5esnapshot.MaxPageSize || p.Count <= open5esnapshot.MaxPageSize || p.Next == nil || !strings.Contains(*p.Next, fmt.Sprintf("limit=%d", open5esnapshot.MaxPageSize)) {
				t.Errorf("limit=1000000: %d of %d records, next %v; want pages of %d", len(p.Results), p.Count, p.Next, open5esnapshot.MaxPageSize)
			}
		})
	}
	wg.Wait()
}

package open5e_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
)

// snapshotServer serves the snapshot through fault, which may answer a
// request itself (returning true) instead.
func snapshotServer(t *testing.T, fault func(w http.ResponseWriter, r *http.Request, n int) bool) *httptest.Server {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fault != nil && fault(w, r, int(n.Add(1))) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fastClient retries quickly so fault tests do not sleep for long.
func fastClient(t *testing.T, url string, o *open5e.ClientOptions) *open5e.Client {
	t.Helper()
	if o == nil {
		o = &open5e.ClientOptions{}
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = time.Millisecond
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = 5 * time.Millisecond
	}
	if o.RequestTimeout == 0 {
		// Generous: a handler's first request unpacks the whole snapshot
		// (47 MB of JSON), seconds under the race detector on a busy
		// machine; the fault tests assert the fault, not the time.
		o.RequestTimeout = time.Minute
	}
	c, err := open5e.NewClient(url, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type observer struct {
	mu     sync.Mutex
	pages  int
	errors map[string]int
}

func (o *observer) PageFetched(string) { o.mu.Lock(); o.pages++; o.mu.Unlock() }
func (o *observer) FetchFailed(_, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.errors == nil {
		o.errors = map[string]int{}
	}
	o.errors[status]++
}

func TestClient_List(t *testing.T) {
	srv := snapshotServer(t, nil)
	obs := &observer{}
	var pages []open5e.Page
	c := fastClient(t, srv.URL, &open5e.ClientOptions{PageSize: 100, Observer: obs})
	recs, err := c.List(context.Background(), "/v2/spells/", func(p open5e.Page) { pages = append(pages, p) })
	if err != nil {
		t.Fatal(err)
	}
	n := recorded(t, "v2/spells")
	wantPages := (n + 99) / 100
	if len(recs) != n || len(pages) != wantPages || obs.pages != wantPages {
		t.Errorf("got %d records on %d pages (observer %d), want %d on %d", len(recs), len(pages), obs.pages, n, wantPages)
	}
	if last := pages[len(pages)-1]; last.Count != n || last.Records != n || last.Number != wantPages {
		t.Errorf("last page: %+v", last)
	}
	// Records keep the public API's links, not the mirror's.
	for _, r := range recs {
		if strings.Contains(string(r), srv.URL) {
			t.Fatalf("record keeps the mirror's address: %.200s", r)
		}
	}
}

func TestClient_faults(t *testing.T) {
	const path = "/v2/conditions/" // 21 records
	for _, c := range []struct {
		name string
		// fault answers the n-th request; ok is false to let it through.
		fault     func(w http.ResponseWriter, r *http.Request, n int) bool
		opts      open5e.ClientOptions
		wantErr   error // nil: the list must be read completely
		wantCount int
		status    string // a failed attempt's status the observer must see
	}{
		{
			name: "500s then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n <= 3 {
					http.Error(w, `{"detail":"boom"}`, http.StatusInternalServerError)
					return true
				}
				return false
			},
			wantCount: 21, status: "500",
		},
		{
			name: "timeout then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 1 {
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
					return true
				}
				return false
			},
			opts:      open5e.ClientOptions{RequestTimeout: 100 * time.Millisecond},
			wantCount: 21, status: "timeout",
		},
		{
			name: "connection dropped then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 1 {
					hj, _ := w.(http.Hijacker)
					conn, _, _ := hj.Hijack()
					conn.Close()
					return true
				}
				return false
			},
			wantCount: 21, status: "connection",
		},
		{
			name: "truncated body then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 1 {
					w.Header().Set("Content-Length", "5000")
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write([]byte(`{"count":21,"next":null,"results":[{"key":`))
					return true
				}
				return false
			},
			wantCount: 21, status: "connection",
		},
		{
			name: "truncated JSON then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 1 {
					_, _ = w.Write([]byte(`{"count":21,"next":null,"results":[{"key":`))
					return true
				}
				return false
			},
			wantCount: 21, status: "malformed",
		},
		{
			name: "malformed JSON always",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				_, _ = w.Write([]byte(`<html>Bad gateway</html>`))
				return true
			},
			wantErr: open5e.ErrMalformed, status: "malformed",
		},
		{
			name: "not a list",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				_, _ = w.Write([]byte(`{"count":1,"next":null,"results":{"a":1}}`))
				return true
			},
			wantErr: open5e.ErrMalformed, status: "malformed",
		},
		{
			name: "404",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				http.Error(w, `{"detail":"Not found."}`, http.StatusNotFound)
				return true
			},
			wantErr: &open5e.HTTPError{}, status: "404",
		},
		{
			name: "5xx forever",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return true
			},
			wantErr: &open5e.HTTPError{}, status: "503",
		},
		{
			name: "next link to another host",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				_, _ = w.Write([]byte(`{"count":42,"next":"http://evil.example/v2/conditions/?page=2","previous":null,"results":[{"key":"a"}]}`))
				return true
			},
			wantErr: open5e.ErrOffBase, status: "off_base",
		},
		{
			name: "next link to another endpoint",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				_, _ = w.Write([]byte(`{"count":42,"next":"/v2/spells/?page=2","previous":null,"results":[{"key":"a"}]}`))
				return true
			},
			wantErr: open5e.ErrOffBase, status: "off_base",
		},
		{
			name: "next loop",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				next := "/v2/conditions/?page=2"
				if r.URL.Query().Get("page") == "2" {
					next = "/v2/conditions/?page=1"
				}
				_, _ = w.Write([]byte(`{"count":42,"next":"` + next + `","previous":null,"results":[{"key":"a"}]}`))
				return true
			},
			wantErr: open5e.ErrPageLoop,
		},
		{
			name:    "too many pages",
			opts:    open5e.ClientOptions{PageSize: 5, MaxPages: 3},
			wantErr: open5e.ErrTooManyPages,
		},
		{
			name:    "response too large",
			opts:    open5e.ClientOptions{MaxResponseBytes: 1000},
			wantErr: open5e.ErrResponseTooLarge, status: "too_large",
		},
		{
			name: "fewer records than counted",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				_, _ = w.Write([]byte(`{"count":42,"next":null,"previous":null,"results":[{"key":"a"}]}`))
				return true
			},
			wantErr: open5e.ErrIncomplete,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := snapshotServer(t, c.fault)
			obs := &observer{}
			o := c.opts
			o.Observer = obs
			o.Retries = 3
			cl := fastClient(t, srv.URL, &o)
			recs, err := cl.List(context.Background(), path, nil)
			if c.wantErr == nil {
				if err != nil || len(recs) != c.wantCount {
					t.Fatalf("got %d records, %v; want %d", len(recs), err, c.wantCount)
				}
			} else {
				var he *open5e.HTTPError
				if _, isHTTP := c.wantErr.(*open5e.HTTPError); isHTTP && !errors.As(err, &he) {
					t.Fatalf("got %v, want an HTTPError", err)
				} else if !isHTTP && !errors.Is(err, c.wantErr) {
					t.Fatalf("got %d records, %v; want %v", len(recs), err, c.wantErr)
				}
			}
			if c.status != "" && obs.errors[c.status] == 0 {
				t.Errorf("observer saw %v, want a %q", obs.errors, c.status)
			}
		})
	}
}

// A 429 is retried after the Retry-After the server asks for, even when
// the client's own backoff is far shorter.
func TestClient_retryAfter(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	srv := snapshotServer(t, func(w http.ResponseWriter, r *http.Request, n int) bool {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"detail":"Request was throttled."}`, http.StatusTooManyRequests)
			return true
		}
		return false
	})
	obs := &observer{}
	c := fastClient(t, srv.URL, &open5e.ClientOptions{Observer: obs})
	recs, err := c.List(context.Background(), "/v2/conditions/", nil)
	if err != nil || len(recs) != 21 {
		t.Fatalf("got %d records, %v", len(recs), err)
	}
	if len(times) != 2 || obs.errors["429"] != 1 {
		t.Fatalf("requests %d, errors %v; want 2 requests, one 429", len(times), obs.errors)
	}
	// A lower bound, not a speed assertion: the retry cannot come sooner.
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Errorf("retried after %v, before the 1s Retry-After", gap)
	}
}

func TestClient_canceled(t *testing.T) {
	srv := snapshotServer(t, func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	})
	c := fastClient(t, srv.URL, &open5e.ClientOptions{BackoffBase: time.Hour, BackoffMax: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := c.List(ctx, "/v2/conditions/", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestNewClient_badURL(t *testing.T) {
	for _, u := range []string{"", "api.open5e.com", "ftp://x", "http://"} {
		if _, err := open5e.NewClient(u, nil); err == nil {
			t.Errorf("NewClient(%q): no error", u)
		}
	}
}

func TestFetchAll_endpointFails(t *testing.T) {
	srv := snapshotServer(t, func(w http.ResponseWriter, r *http.Request, n int) bool {
		// The first endpoint fetched: the others' fetching proves nothing more.
		if r.URL.Path == open5e.Endpoints()[0].Path() && r.URL.Query().Get("page") == "2" {
			http.Error(w, "down", http.StatusInternalServerError)
			return true
		}
		return false
	})
	c := fastClient(t, srv.URL, &open5e.ClientOptions{PageSize: 50, Retries: 1})
	es, err := open5e.FetchAll(context.Background(), c, nil)
	var he *open5e.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 500 || es != nil {
		t.Fatalf("got %d entities, %v; want an HTTP 500 error", len(es), err)
	}
}

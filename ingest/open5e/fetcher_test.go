package open5e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// upstream serves the snapshot with switchable faults and edits.
type upstream struct {
	h   *open5esnapshot.Handler
	srv *httptest.Server

	mu sync.Mutex
	// fault may answer a request itself; n counts requests since set.
	fault func(w http.ResponseWriter, r *http.Request, n int) bool
	n     int
	// edit rewrites each list record (nil drops it); drops says how many
	// records it drops from each endpoint, so that every page's count
	// agrees as the API's would.
	edit  func(path string, rec json.RawMessage) json.RawMessage
	drops map[string]int
	// srd narrows the endpoints with the most records to the SRD 5.1
	// (newSRDUpstream), as the API's own document filter does.
	srd bool
}

// srdFilters are the document filters newSRDUpstream adds to requests of
// the largest endpoints a resync test reads: a resync's logic is the same
// on a few hundred records as on thousands, which take minutes under the
// race detector.
var srdFilters = map[string]url.Values{
	"/v2/spells/":    {"document__key__in": {"srd-2014"}},
	"/v2/creatures/": {"document__key__in": {"srd-2014"}},
	"/v1/spells/":    {"document__slug__in": {"wotc-srd"}},
	"/v1/monsters/":  {"document__slug__in": {"wotc-srd"}},
}

func newUpstream(tb testing.TB) *upstream {
	tb.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		tb.Fatal(err)
	}
	u := &upstream{h: h}
	u.srv = httptest.NewServer(u)
	tb.Cleanup(u.srv.Close)
	return u
}

// newSRDUpstream serves the snapshot with the largest endpoints narrowed
// to the SRD 5.1 (srdFilters).
func newSRDUpstream(tb testing.TB) *upstream {
	u := newUpstream(tb)
	u.srd = true
	return u
}

// recorded is how many records the upstream serves of an endpoint
// ("v2/spells").
func (u *upstream) recorded(t *testing.T, endpoint string) int {
	t.Helper()
	f, ok := srdFilters["/"+endpoint+"/"]
	if !u.srd || !ok {
		return recorded(t, endpoint)
	}
	rec := httptest.NewRecorder()
	u.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+endpoint+"/?"+f.Encode(), nil))
	var p struct{ Count int }
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Count == 0 {
		t.Fatalf("%s narrowed to the SRD: count %d, %v", endpoint, p.Count, err)
	}
	return p.Count
}

// served is how many entities a sync of an endpoint ("v1/spells") gives
// from the upstream: for v1, the records that v2 does not repeat.
func (u *upstream) served(t *testing.T, endpoint string) int {
	t.Helper()
	if _, ok := srdFilters["/"+endpoint+"/"]; !u.srd || !ok {
		return served(t, endpoint)
	}
	n := 0
	for _, e := range snapshot(t) {
		if strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/"+endpoint+"/") && e.GetDocument().GetKey() == "srd-2014" {
			n++
		}
	}
	return n
}

func (u *upstream) set(fault func(http.ResponseWriter, *http.Request, int) bool, edit func(string, json.RawMessage) json.RawMessage, drops map[string]int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fault, u.edit, u.drops, u.n = fault, edit, drops, 0
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := srdFilters[r.URL.Path]; ok && u.srd {
		q := r.URL.Query()
		for k, vs := range f {
			q[k] = vs
		}
		r = r.Clone(r.Context())
		r.URL.RawQuery = q.Encode()
	}
	u.mu.Lock()
	u.n++
	fault, edit, n, drops := u.fault, u.edit, u.n, u.drops[r.URL.Path]
	u.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	if edit == nil {
		u.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	u.h.ServeHTTP(rec, r)
	var page struct {
		Count    int               `json:"count"`
		Next     *string           `json:"next"`
		Previous *string           `json:"previous"`
		Results  []json.RawMessage `json:"results"`
	}
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK && json.Unmarshal(body, &page) == nil && page.Results != nil {
		out := page.Results[:0]
		for _, rr := range page.Results {
			if e := edit(r.URL.Path, rr); e != nil {
				out = append(out, e)
			}
		}
		page.Results = out
		page.Count -= drops
		// Keep the records' bytes: the API does not escape <, > and &.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(page)
		body = bytes.TrimSpace(buf.Bytes())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

func endpoints(names ...string) []open5e.Endpoint {
	var out []open5e.Endpoint
	for _, n := range names {
		v, name, _ := strings.Cut(n, "/")
		for _, ep := range open5e.Endpoints() {
			if ep.Version == v && ep.Name == name {
				out = append(out, ep)
			}
		}
	}
	return out
}

func fetcher(t testing.TB, js jetstream.JetStream, url string, o *open5e.Options) *open5e.Fetcher {
	t.Helper()
	if o == nil {
		o = &open5e.Options{}
	}
	if o.Client == nil {
		o.Client = &open5e.ClientOptions{}
	}
	if o.Client.BackoffBase == 0 {
		o.Client.BackoffBase = time.Millisecond
		o.Client.BackoffMax = 5 * time.Millisecond
	}
	if o.Client.PageSize == 0 {
		o.Client.PageSize = 500
	}
	f, err := open5e.NewFetcher(js, url, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func streamMsgs(t testing.TB, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), ingest.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// events returns the stream's events from sequence from on.
func events(t *testing.T, js jetstream.JetStream, from uint64) []*lkv1.EntityEvent {
	t.Helper()
	s, err := js.Stream(context.Background(), ingest.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	var out []*lkv1.EntityEvent
	for seq := from; ; seq++ {
		m, err := s.GetMsg(context.Background(), seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev := &lkv1.EntityEvent{}
		if err := proto.Unmarshal(m.Data, ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func state(t *testing.T, js jetstream.JetStream, key string) *lkv1.EndpointState {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("state %s: %v", key, err)
	}
	st := &lkv1.EndpointState{}
	if err := proto.Unmarshal(e.Value(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func mustSync(t *testing.T, f *open5e.Fetcher) open5e.Summary {
	t.Helper()
	sum, err := f.Sync(context.Background())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return sum
}

// The whole catalogue: every entity SnapshotEntities gives lands on the
// stream once, under its subject, the SRDs' first; a second run publishes
// nothing.
func TestFetcher_Sync_fullCatalogue(t *testing.T) {
	want := snapshot(t)
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Text: srd52.NewSource(nil)})

	sum := mustSync(t, f)
	tot := sum.Totals()
	if tot.New != len(want) || tot.Changed != 0 || tot.Removed != 0 || tot.Errors != 0 {
		t.Errorf("first run: %s", tot)
	}
	if got := streamMsgs(t, js); got != uint64(len(want)) {
		t.Errorf("stream holds %d messages, want %d", got, len(want))
	}
	s, _ := js.Stream(context.Background(), ingest.StreamName)
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(lkv1.SubjectPrefix+".>"))
	if err != nil {
		t.Fatal(err)
	}
	wantSubjects := map[string]uint64{}
	for _, e := range want {
		wantSubjects[lkv1.Subject(e.GetDocument().GetSource(), e.GetKind())]++
	}
	for subj, n := range wantSubjects {
		if info.State.Subjects[subj] != n {
			t.Errorf("%s: %d messages, want %d", subj, info.State.Subjects[subj], n)
		}
	}
	if len(info.State.Subjects) != len(wantSubjects) {
		t.Errorf("stream has %d subjects, want %d", len(info.State.Subjects), len(wantSubjects))
	}
	spells := 0
	for _, e := range want {
		if strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/v2/spells/") {
			spells++
		}
	}
	st := state(t, js, "sync.v2.spells")
	if len(st.GetEntities()) != spells || spells == 0 || st.GetDigest() == "" || st.GetLastSuccess() == nil || st.GetLastError() != "" {
		t.Errorf("state of /v2/spells/: %d entities (want %d), digest %q, last success %v, error %q",
			len(st.GetEntities()), spells, st.GetDigest(), st.GetLastSuccess(), st.GetLastError())
	}

	// Within each endpoint the SRDs' entities come first: a node stores
	// the stream in order, and a name answered during a first load gives
	// the copy it will give once the load is done.
	otherBook := map[string]string{} // subject -> first entity of another book
	for _, ev := range events(t, js, 1) {
		e := ev.GetUpsert()
		subj := lkv1.Subject(e.GetDocument().GetSource(), e.GetKind())
		switch doc := e.GetDocument().GetKey(); {
		case doc != "srd-2014" && doc != "srd-2024":
			if otherBook[subj] == "" {
				otherBook[subj] = e.GetKey()
			}
		case otherBook[subj] != "":
			t.Errorf("%s: the SRD's %s came after %s", subj, e.GetKey(), otherBook[subj])
			delete(otherBook, subj)
		}
	}

	sum = mustSync(t, f)
	tot = sum.Totals()
	if tot.New != 0 || tot.Changed != 0 || tot.Removed != 0 || tot.Unchanged != len(want) {
		t.Errorf("second run: %s", tot)
	}
	if got := streamMsgs(t, js); got != uint64(len(want)) {
		t.Errorf("after an unchanged resync the stream holds %d messages, want %d", got, len(want))
	}
	if st2 := state(t, js, "sync.v2.spells"); st2.GetDigest() != st.GetDigest() {
		t.Error("digest changed without a change")
	}
}

var small = []string{"v2/spells", "v2/conditions", "v1/spells"}

const fireball = "open5e_v2:srd-2014:spell:fireball"

func editFireball(path string, rec json.RawMessage) json.RawMessage {
	if path == "/v2/spells/" && bytes.Contains(rec, []byte(`"key":"srd_fireball"`)) {
		return bytes.Replace(rec, []byte("A bright streak"), []byte("A blinding streak"), 1)
	}
	return rec
}

var fireballDrop = map[string]int{"/v2/spells/": 1}

func dropFireball(path string, rec json.RawMessage) json.RawMessage {
	if path == "/v2/spells/" && bytes.Contains(rec, []byte(`"key":"srd_fireball"`)) {
		return nil
	}
	return rec
}

func TestFetcher_Sync_changedAndRemoved(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newSRDUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints(small...)})
	first := mustSync(t, f).Totals()
	base := streamMsgs(t, js)
	// v2 spells, v2 conditions (one per condition and edition) and the v1
	// spells whose books v2 lacks.
	if want := uint64(up.recorded(t, "v2/spells") + up.served(t, "v2/conditions") + up.served(t, "v1/spells")); base != want || first.New != int(want) {
		t.Fatalf("first run: %d messages, %s; want %d", base, first, want)
	}
	oldHash := state(t, js, "sync.v2.spells").GetEntities()[fireball]

	up.set(nil, editFireball, nil)
	sum := mustSync(t, f)
	evs := events(t, js, base+1)
	if len(evs) != 1 || evs[0].GetUpsert().GetKey() != fireball || !strings.Contains(evs[0].GetUpsert().GetDescription(), "A blinding streak") {
		t.Fatalf("a changed record published %d events: %v", len(evs), evs)
	}
	if tot := sum.Totals(); tot.Changed != 1 || tot.New != 0 || tot.Removed != 0 {
		t.Errorf("summary after a change: %s", tot)
	}
	newHash := state(t, js, "sync.v2.spells").GetEntities()[fireball]
	if newHash == oldHash || newHash != evs[0].GetUpsert().GetContentHash() {
		t.Errorf("state hash %q (was %q), published %q", newHash, oldHash, evs[0].GetUpsert().GetContentHash())
	}

	up.set(nil, dropFireball, fireballDrop)
	sum = mustSync(t, f)
	evs = events(t, js, base+2)
	if len(evs) != 1 || evs[0].GetTombstone().GetKey() != fireball || evs[0].GetTombstone().GetKind() != lkv1.Kind_KIND_SPELL {
		t.Fatalf("a removed record published %d events: %v", len(evs), evs)
	}
	if tot := sum.Totals(); tot.Removed != 1 || tot.New != 0 || tot.Changed != 0 {
		t.Errorf("summary after a removal: %s", tot)
	}
	if _, ok := state(t, js, "sync.v2.spells").GetEntities()[fireball]; ok {
		t.Error("state still lists the removed entity")
	}
	// Still gone: no second tombstone.
	mustSync(t, f)
	if got := streamMsgs(t, js); got != base+2 {
		t.Errorf("stream holds %d messages, want %d", got, base+2)
	}
	for _, s := range sum.Endpoints {
		if !strings.Contains(s.String(), "fetched") {
			t.Errorf("summary line %q", s)
		}
	}
}

// An entity the API stops listing and lists again, with the same content,
// within the stream's duplicate window comes back: its upsert is not
// dropped as a duplicate of the one before the tombstone. Removed and
// restored a second time, it comes back again; a run that changes nothing
// publishes nothing.
func TestFetcher_Sync_removedAndRestored(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newSRDUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/spells")})
	mustSync(t, f)
	next := streamMsgs(t, js) + 1
	for round := range 2 {
		up.set(nil, dropFireball, fireballDrop)
		mustSync(t, f)
		evs := events(t, js, next)
		if len(evs) != 1 || evs[0].GetTombstone().GetKey() != fireball {
			t.Fatalf("round %d, removed: %d events %v, want fireball's tombstone", round, len(evs), evs)
		}
		if _, ok := state(t, js, "sync.v2.spells").GetGenerations()[fireball]; !ok {
			t.Errorf("round %d: the state keeps no generation of the removed fireball", round)
		}
		next++

		up.set(nil, nil, nil)
		sum := mustSync(t, f)
		evs = events(t, js, next)
		if len(evs) != 1 || evs[0].GetUpsert().GetKey() != fireball {
			t.Fatalf("round %d, restored: %d events, want fireball's upsert", round, len(evs))
		}
		if tot := sum.Totals(); tot.New != 1 || tot.Errors != 0 {
			t.Errorf("round %d, restored: summary %s", round, tot)
		}
		next++
	}
	mustSync(t, f)
	if got := streamMsgs(t, js); got != next-1 {
		t.Errorf("a run that changes nothing: stream holds %d messages, want %d", got, next-1)
	}
}

// A record edited and edited back within the duplicate window ends as it
// began: the second upsert of the first content is published, not dropped
// as a duplicate of the first.
func TestFetcher_Sync_editedBack(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newSRDUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/spells")})
	mustSync(t, f)
	next := streamMsgs(t, js) + 1
	original := state(t, js, "sync.v2.spells").GetEntities()[fireball]
	for _, c := range []struct {
		name string
		edit func(string, json.RawMessage) json.RawMessage
	}{{"edited", editFireball}, {"edited back", nil}, {"edited again", editFireball}} {
		up.set(nil, c.edit, nil)
		mustSync(t, f)
		evs := events(t, js, next)
		if len(evs) != 1 || evs[0].GetUpsert().GetKey() != fireball {
			t.Fatalf("%s: %d events, want fireball's upsert", c.name, len(evs))
		}
		next++
	}
	if got := events(t, js, next-2)[0].GetUpsert().GetContentHash(); got != original {
		t.Errorf("edited back: hash %s, want the original %s", got, original)
	}
}

// Faults during a resync that also removes a record: recovered faults end
// in exactly that one tombstone; lasting ones publish nothing, record the
// error and keep the state.
func TestFetcher_Sync_faults(t *testing.T) {
	// The SRD's spells in several pages, so that page 2 can fail.
	const pageSize = 100
	page2 := func(r *http.Request) bool {
		return r.URL.Path == "/v2/spells/" && r.URL.Query().Get("page") == "2"
	}
	for _, c := range []struct {
		name      string
		fault     func(w http.ResponseWriter, r *http.Request, n int) bool
		recovers  bool
		wantInErr string
	}{
		{"500s then success", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n <= 2 {
				http.Error(w, "boom", http.StatusInternalServerError)
				return true
			}
			return false
		}, true, ""},
		{"timeout once", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n == 1 {
				<-r.Context().Done()
				return true
			}
			return false
		}, true, ""},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return true
			}
			return false
		}, true, ""},
		{"truncated JSON once", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if page2(r) && n < 4 {
				_, _ = w.Write([]byte(`{"count":1636,"next":null,"results":[{"key":"x"`))
				return true
			}
			return false
		}, true, ""},
		{"malformed JSON on page 2", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if page2(r) {
				_, _ = w.Write([]byte(`not json`))
				return true
			}
			return false
		}, false, "malformed"},
		{"endpoint failing mid-way", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if page2(r) {
				http.Error(w, "boom", http.StatusInternalServerError)
				return true
			}
			return false
		}, false, "500"},
		{"next link to another host", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if r.URL.Path == "/v2/spells/" && r.URL.Query().Get("page") == "" {
				_, _ = w.Write([]byte(`{"count":1636,"next":"http://elsewhere.example/v2/spells/?page=2","previous":null,"results":[]}`))
				return true
			}
			return false
		}, false, "leaves the base URL"},
		{"next loop", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if page2(r) {
				_, _ = w.Write([]byte(`{"count":1636,"next":"/v2/spells/?limit=` + strconv.Itoa(pageSize) + `","previous":null,"results":[]}`))
				return true
			}
			return false
		}, false, "loop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			up := newSRDUpstream(t)
			mustSync(t, fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/spells"), Client: &open5e.ClientOptions{PageSize: pageSize}}))
			base := streamMsgs(t, js)
			timeout := 10 * time.Second
			if c.name == "timeout once" {
				timeout = time.Second
			}
			f := fetcher(t, js, up.srv.URL, &open5e.Options{
				Endpoints: endpoints("v2/spells"),
				Client:    &open5e.ClientOptions{RequestTimeout: timeout, Retries: 3, PageSize: pageSize},
			})

			up.set(c.fault, dropFireball, fireballDrop)
			sum, err := f.Sync(context.Background())
			st := state(t, js, "sync.v2.spells")
			got := streamMsgs(t, js)
			if c.recovers {
				if err != nil || got != base+1 || sum.Totals().Removed != 1 {
					t.Fatalf("got %v, %d new messages, %s; want one tombstone", err, got-base, sum.Totals())
				}
				if st.GetLastError() != "" || st.GetEntities()[fireball] != "" {
					t.Errorf("state: error %q, fireball still listed %v", st.GetLastError(), st.GetEntities()[fireball] != "")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantInErr) {
				t.Fatalf("got error %v, want one mentioning %q", err, c.wantInErr)
			}
			if got != base {
				t.Errorf("a failed fetch published %d messages", got-base)
			}
			if len(st.GetEntities()) != up.recorded(t, "v2/spells") || st.GetEntities()[fireball] == "" {
				t.Errorf("state lost entities: %d listed", len(st.GetEntities()))
			}
			if !strings.Contains(st.GetLastError(), c.wantInErr) || st.GetBackoffUntil() == nil || st.GetLastSuccess() == nil {
				t.Errorf("state: error %q, backoff %v, last success %v", st.GetLastError(), st.GetBackoffUntil(), st.GetLastSuccess())
			}
			// Left alone while backing off, even though it would now succeed.
			up.set(nil, dropFireball, fireballDrop)
			sum, err = f.Sync(context.Background())
			if err != nil || len(sum.Endpoints) != 1 || !sum.Endpoints[0].Skipped || streamMsgs(t, js) != base {
				t.Errorf("during backoff: %v, %+v", err, sum.Endpoints)
			}
		})
	}
}

// The v2 SRD 5.1 classes and creatures are completed from the v1 records
// of the same book (class columns, creature subtypes) through a resync
// too, each v1 page read once; when the v1 endpoint fails, nothing of the
// v2 endpoint is published and what is stored stays.
func TestFetcher_Sync_supplements(t *testing.T) {
	for _, c := range []struct {
		v2, v1 string
		key    string
		check  func(*lkv1.Entity) bool
	}{
		{"v2/classes", "v1/classes", "open5e_v2:srd-2014:class:barbarian", func(e *lkv1.Entity) bool {
			return slices.Equal(e.GetCharacterOption().GetProgression().GetColumns(), []string{"Rages", "Rage Damage"})
		}},
		{"v2/creatures", "v1/monsters", "open5e_v2:srd-2014:creature:barbed-devil", func(e *lkv1.Entity) bool {
			return e.GetCreature().GetSubtype() == "devil" && e.GetCreature().GetGroup() == "Devils"
		}},
	} {
		t.Run(c.v2, func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			up := newSRDUpstream(t)
			v1Path := "/" + c.v1 + "/"
			var mu sync.Mutex
			reads := map[string]int{}
			up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
				mu.Lock()
				defer mu.Unlock()
				reads[r.URL.String()]++
				return false
			}, nil, nil)
			mustSync(t, fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints(c.v2, c.v1)}))
			var got *lkv1.Entity
			for _, ev := range events(t, js, 1) {
				if ev.GetUpsert().GetKey() == c.key {
					got = ev.GetUpsert()
				}
			}
			if !c.check(got) {
				t.Fatalf("published %s: %v", c.key, got)
			}
			mu.Lock()
			v1Pages := 0
			for u, n := range reads {
				if strings.HasPrefix(u, v1Path) {
					v1Pages++
					if n != 1 {
						t.Errorf("%s read %d times in one run", u, n)
					}
				}
			}
			mu.Unlock()
			if v1Pages == 0 {
				t.Errorf("%s never read", v1Path)
			}
			base := streamMsgs(t, js)
			stateKey := "sync." + strings.ReplaceAll(c.v2, "/", ".")
			before := state(t, js, stateKey)

			up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == v1Path {
					http.Error(w, "boom", http.StatusInternalServerError)
					return true
				}
				return false
			}, nil, nil)
			f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints(c.v2), Client: &open5e.ClientOptions{Retries: 1}})
			_, err := f.Sync(context.Background())
			if err == nil || !strings.Contains(err.Error(), v1Path) {
				t.Fatalf("sync with %s failing: %v", v1Path, err)
			}
			if n := streamMsgs(t, js); n != base {
				t.Errorf("published %d messages without the v1 records", n-base)
			}
			after := state(t, js, stateKey)
			if after.GetDigest() != before.GetDigest() || len(after.GetEntities()) != len(before.GetEntities()) || after.GetBackoffUntil() == nil {
				t.Errorf("state: %d entities (was %d), digest kept %v, backoff %v", len(after.GetEntities()), len(before.GetEntities()), after.GetDigest() == before.GetDigest(), after.GetBackoffUntil())
			}
		})
	}
}

func TestFetcher_Sync_upstreamDown(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	reg := prometheus.NewRegistry()
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints: endpoints(small...),
		Client:    &open5e.ClientOptions{Retries: 1},
		Metrics:   open5e.NewMetrics(reg),
	})
	mustSync(t, f)
	base := streamMsgs(t, js)
	had := map[open5e.Endpoint]int{}
	for _, ep := range endpoints(small...) {
		had[ep] = len(state(t, js, open5e.StateKey(ep)).GetEntities())
	}
	up.srv.Close()

	sum, err := f.Sync(context.Background())
	if err == nil {
		t.Fatal("no error with the upstream down")
	}
	if got := streamMsgs(t, js); got != base {
		t.Errorf("stream went from %d to %d messages", base, got)
	}
	for _, ep := range endpoints(small...) {
		st := state(t, js, open5e.StateKey(ep))
		if st.GetLastError() == "" || len(st.GetEntities()) != had[ep] || st.GetLastSuccess() == nil {
			t.Errorf("%s: error %q, %d entities kept of %d", ep, st.GetLastError(), len(st.GetEntities()), had[ep])
		}
	}
	if len(sum.Endpoints) != len(small) || sum.Totals().Errors == 0 {
		t.Errorf("summary: %+v", sum.Totals())
	}
	if n := sumMetric(t, reg, "lorekeeper_ingest_fetch_errors_total"); n == 0 {
		t.Error("no fetch errors counted")
	}
}

// sumMetric adds up every sample of the named counter family.
func sumMetric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func TestNewFetcher_badBaseURL(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	for _, u := range []string{"ftp://example.com", "not a url", "http://"} {
		if f, err := open5e.NewFetcher(js, u, nil); err == nil || f != nil {
			t.Errorf("NewFetcher(%q) = %v, %v; want an error and no fetcher", u, f, err)
		}
	}
}

// TestNewFetcher_fetchErrorsStartAtZero: the alert on the fetch error
// ratio has data, and sees the first error, from the first scrape.
func TestNewFetcher_fetchErrorsStartAtZero(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	reg := prometheus.NewRegistry()
	eps := endpoints("v2/spells", "v2/conditions")
	fetcher(t, js, "http://127.0.0.1:1", &open5e.Options{Endpoints: eps, Metrics: open5e.NewMetrics(reg)})
	if got, want := testutil.CollectAndCount(reg, "lorekeeper_ingest_fetch_errors_total"), 2*len(eps); got != want {
		t.Errorf("%d fetch error series before any fetch, want %d (timeout and connection per endpoint)", got, want)
	}
	if got := sumMetric(t, reg, "lorekeeper_ingest_fetch_errors_total"); got != 0 {
		t.Errorf("fetch errors = %v before any fetch, want 0", got)
	}
}

func TestFetcher_Sync_lease(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	kv, err := js.KeyValue(context.Background(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions")})

	held, _ := json.Marshal(map[string]any{"holder": "other", "expires": time.Now().Add(time.Hour)})
	if _, err := kv.Put(context.Background(), open5e.LeaseKey, held); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Sync(context.Background()); !errors.Is(err, open5e.ErrLeaseHeld) {
		t.Fatalf("with the lease held elsewhere: %v, want ErrLeaseHeld", err)
	}
	if got := streamMsgs(t, js); got != 0 {
		t.Errorf("published %d messages without the lease", got)
	}

	expired, _ := json.Marshal(map[string]any{"holder": "other", "expires": time.Now().Add(-time.Second)})
	if _, err := kv.Put(context.Background(), open5e.LeaseKey, expired); err != nil {
		t.Fatal(err)
	}
	mustSync(t, f)
	if got := streamMsgs(t, js); got != uint64(v2Conditions(t)) {
		t.Errorf("after taking over an expired lease: %d messages, want %d", got, v2Conditions(t))
	}
	if _, err := kv.Get(context.Background(), open5e.LeaseKey); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("lease not released: %v", err)
	}

	// Two fetchers (two processes) started together: never two runs at once.
	// Each run reads its pages (runPages) one after the other, so without
	// overlap the requests come in blocks of that many from one fetcher;
	// overlapping runs would interleave their requests.
	run := runPages(t, "v2/spells")
	var (
		mu     sync.Mutex
		agents []string
	)
	up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		return false
	}, nil, nil)
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make(chan error, 6)
	for _, agent := range []string{"g", "h"} {
		x := fetcher(t, js, up.srv.URL, &open5e.Options{
			Endpoints: endpoints("v2/spells"),
			Client:    &open5e.ClientOptions{UserAgent: agent},
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 3 {
				_, err := x.Sync(context.Background())
				results <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil && !errors.Is(err, open5e.ErrLeaseHeld) {
			t.Errorf("concurrent sync: %v", err)
		}
	}
	for i := 0; i < len(agents); {
		j := i
		for j < len(agents) && agents[j] == agents[i] {
			j++
		}
		if (j-i)%run != 0 {
			t.Fatalf("runs overlapped: requests by agent %v", agents)
		}
		i = j
	}
	if len(agents) == 0 {
		t.Fatal("no run happened")
	}
	if got, want := streamMsgs(t, js), uint64(served(t, "v2/conditions")+recorded(t, "v2/spells")); got != want {
		t.Errorf("stream holds %d messages, want %d", got, want)
	}
}

func TestFetcher_progressAndMetrics(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	reg := prometheus.NewRegistry()
	var reports []open5e.Progress
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints: endpoints(small...),
		Metrics:   open5e.NewMetrics(reg),
		Progress:  func(p open5e.Progress) { reports = append(reports, p) },
	})
	mustSync(t, f)
	done := map[string]bool{}
	lastRecords := map[string]int{}
	for _, p := range reports {
		if p.Endpoints != len(small) || p.Index < 1 || p.Index > p.Endpoints || (p.Total > 0 && p.Done > p.Total) {
			t.Errorf("report %+v", p)
		}
		if p.Done < lastRecords[p.Endpoint] {
			t.Errorf("%s: records went back from %d to %d", p.Endpoint, lastRecords[p.Endpoint], p.Done)
		}
		lastRecords[p.Endpoint] = p.Done
		if p.Finished {
			done[p.Endpoint] = true
			if p.Summary == nil || p.Summary.Endpoint != p.Endpoint {
				t.Errorf("done report without its summary: %+v", p)
			}
		}
	}
	if len(done) != len(small) || lastRecords["/v2/spells/"] != recorded(t, "v2/spells") {
		t.Errorf("done reports %v, spells records %d", done, lastRecords["/v2/spells/"])
	}

	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
	// Pages: the catalogue's lists and the content pages (runPages).
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]float64{}
	pages := -1.0
	for _, fam := range fams {
		switch fam.GetName() {
		case "lorekeeper_ingest_pages_fetched_total":
			pages = fam.GetMetric()[0].GetCounter().GetValue()
		case "lorekeeper_ingest_entities_published_total":
			for _, m := range fam.GetMetric() {
				l := map[string]string{}
				for _, lp := range m.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				published[l["kind"]+"/"+l["document"]+"/"+l["outcome"]] = m.GetCounter().GetValue()
			}
		case "lorekeeper_ingest_last_success_timestamp_seconds":
			if len(fam.GetMetric()) != len(small) || fam.GetMetric()[0].GetGauge().GetValue() < float64(time.Now().Add(-time.Hour).Unix()) {
				t.Errorf("last success: %v", fam.GetMetric())
			}
		case "lorekeeper_ingest_resync_duration_seconds":
			if fam.GetMetric()[0].GetHistogram().GetSampleCount() != 1 {
				t.Errorf("resync duration samples: %v", fam.GetMetric()[0].GetHistogram().GetSampleCount())
			}
		}
	}
	wantPages := runPages(t, small...)
	wantPublished := map[string]float64{}
	for _, ep := range small {
		for _, e := range snapshot(t) {
			if strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/"+ep+"/") {
				wantPublished[e.GetKind().Slug()+"/"+e.GetDocument().GetKey()+"/created"]++
			}
		}
	}
	if pages != float64(wantPages) {
		t.Errorf("pages fetched: %v, want %d", pages, wantPages)
	}
	for k, want := range wantPublished {
		if published[k] != want {
			t.Errorf("published %s: %v, want %v", k, published[k], want)
		}
	}
	if len(published) != len(wantPublished) {
		t.Errorf("published %d (kind, document, outcome) series, want %d: %v", len(published), len(wantPublished), published)
	}
}

func TestFetcher_Run(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	var mu sync.Mutex
	runs := 0
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints: endpoints("v2/conditions"),
		Interval:  time.Hour,
		Progress: func(p open5e.Progress) {
			if p.Finished {
				mu.Lock()
				runs++
				mu.Unlock()
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			r := runs
			mu.Unlock()
			if r >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d runs, want %d", r, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(1) // never synced: runs at once
	if got := streamMsgs(t, js); got != uint64(v2Conditions(t)) {
		t.Errorf("after the first run: %d messages", got)
	}
	f.Trigger()
	waitFor(2)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	// A new process finds the last run recent and waits for the interval.
	g := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions"), Interval: time.Hour,
		Progress: func(p open5e.Progress) { t.Errorf("ran before the interval: %+v", p) }})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := g.Run(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run returned %v", err)
	}
}

// BenchmarkSync_fullCatalogue fetches the whole snapshot from a local
// server and publishes it to a fresh JetStream each iteration.
func BenchmarkSync_fullCatalogue(b *testing.B) {
	up := newUpstream(b)
	total := 0
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		js := ingesttest.JetStream(b, nil)
		f, err := open5e.NewFetcher(js, up.srv.URL, &open5e.Options{Client: &open5e.ClientOptions{PageSize: 500}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := f.Sync(context.Background())
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		total += sum.Totals().New
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "entities/s")
	b.Log("entities per run: " + strconv.Itoa(total/max(b.N, 1)))
}

// A record that cannot be normalised is reported, and loses nothing: its
// entity is not tombstoned and the rest of the endpoint is still published.
func TestFetcher_Sync_invalidRecord(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions")})
	mustSync(t, f)
	base := streamMsgs(t, js)
	up.set(nil, func(path string, rec json.RawMessage) json.RawMessage {
		switch {
		case bytes.Contains(rec, []byte(`"key":"grappled"`)):
			return replaceLast(rec, `"name":"Grappled"`, `"name":""`)
		case bytes.Contains(rec, []byte(`"key":"prone"`)):
			return replaceLast(rec, `"name":"Prone"`, `"name":"Lying Prone"`)
		}
		return rec
	}, nil)
	sum, err := f.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "grappled") || !errors.Is(err, open5e.ErrInvalidRecord) {
		t.Fatalf("got %v, want an invalid record error naming grappled", err)
	}
	// Prone was renamed: its new key is upserted, but the old one is not
	// tombstoned while the list cannot be trusted to be complete.
	// Prone is one record and three editions' entities (see splitEditions).
	evs := events(t, js, base+1)
	var upserted []string
	for _, ev := range evs {
		upserted = append(upserted, ev.GetUpsert().GetKey())
	}
	slices.Sort(upserted)
	if want := []string{"open5e_v2:a5e-ag:condition:lying-prone", "open5e_v2:srd-2014:condition:lying-prone", "open5e_v2:srd-2024:condition:lying-prone"}; !slices.Equal(upserted, want) {
		t.Fatalf("got %d events: %v, want upserts of %v", len(evs), evs, want)
	}
	st := state(t, js, "sync.v2.conditions")
	if st.GetEntities()["open5e_v2:srd-2024:condition:grappled"] == "" || st.GetEntities()["open5e_v2:srd-2014:condition:prone"] == "" || st.GetLastError() == "" {
		t.Errorf("state: %d entities, error %q", len(st.GetEntities()), st.GetLastError())
	}
	if tot := sum.Totals(); tot.Errors != 1 || tot.New != len(upserted) || tot.Removed != 0 {
		t.Errorf("summary: %s", tot)
	}
}

// replaceLast replaces the last old in rec: a condition's own name comes
// after its icon's.
func replaceLast(rec json.RawMessage, old, repl string) json.RawMessage {
	i := bytes.LastIndex(rec, []byte(old))
	if i < 0 {
		return rec
	}
	return append(append(append(json.RawMessage{}, rec[:i]...), repl...), rec[i+len(old):]...)
}

// After a run in which an endpoint failed, Run tries that endpoint again,
// alone, once its backoff is over.
func TestFetcher_Run_retriesFailedEndpoints(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	var failing atomic.Bool
	failing.Store(true)
	up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == "/v2/conditions/" && failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}
		return false
	}, nil, nil)
	var mu sync.Mutex
	done := map[string]int{}
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints:       endpoints("v2/spells", "v2/conditions"),
		Interval:        time.Hour,
		EndpointBackoff: 100 * time.Millisecond,
		Client:          &open5e.ClientOptions{Retries: 1},
		Progress: func(p open5e.Progress) {
			if p.Finished {
				mu.Lock()
				done[p.Endpoint]++
				if p.Endpoint == "/v2/conditions/" && done[p.Endpoint] == 1 {
					failing.Store(false) // recovered for the retry
				}
				mu.Unlock()
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- f.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := done["/v2/conditions/"]
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("conditions synced %d times, want a retry", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-errc
	mu.Lock()
	defer mu.Unlock()
	if done["/v2/spells/"] != 1 {
		t.Errorf("spells synced %d times, want once (only the failed endpoint is retried)", done["/v2/spells/"])
	}
	if st := state(t, js, "sync.v2.conditions"); st.GetLastError() != "" || len(st.GetEntities()) != v2Conditions(t) {
		t.Errorf("conditions after the retry: error %q, %d entities", st.GetLastError(), len(st.GetEntities()))
	}
}

// When only NATS failed a run (the stream, or the state bucket before any
// endpoint), Run tries again after StreamRetry, not after the endpoint
// backoff or the next scheduled run: the client reconnects to another
// server within seconds.
func TestFetcher_Run_retriesStreamFailuresSoon(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(t *testing.T, js jetstream.JetStream)
		// endpointFails: the run reaches the endpoint, which fails (else
		// the run fails before any endpoint).
		endpointFails bool
	}{
		{"stream gone", func(t *testing.T, js jetstream.JetStream) {
			if err := js.DeleteStream(t.Context(), ingest.StreamName); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"state bucket gone", func(t *testing.T, js jetstream.JetStream) {
			if err := js.DeleteKeyValue(t.Context(), ingest.StateBucket); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := ingesttest.JetStream(t, nil)
			up := newUpstream(t)
			c.break_(t, js)
			var repaired sync.Once
			repair := func() {
				repaired.Do(func() {
					if err := ingest.EnsureResources(context.Background(), js, 1); err != nil {
						t.Error(err)
					}
				})
			}
			var mu sync.Mutex
			var runs []error
			f := fetcher(t, js, up.srv.URL, &open5e.Options{
				Endpoints:       endpoints("v2/conditions"),
				Interval:        time.Hour,
				EndpointBackoff: time.Hour,
				StreamRetry:     100 * time.Millisecond,
				Client:          &open5e.ClientOptions{Retries: 1},
				Progress: func(p open5e.Progress) {
					if p.Finished {
						mu.Lock()
						runs = append(runs, p.Summary.Err)
						mu.Unlock()
						if p.Summary.Err != nil {
							repair()
						}
					}
				},
			})
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- f.Run(ctx) }()
			defer func() { cancel(); <-errc }()
			if !c.endpointFails {
				// Repaired after the first run failed (it fails at once).
				time.Sleep(300 * time.Millisecond)
				repair()
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				mu.Lock()
				ok := len(runs) > 0 && runs[len(runs)-1] == nil
				n := len(runs)
				mu.Unlock()
				if ok {
					if c.endpointFails && n < 2 {
						t.Fatalf("the first run passed: the stream was not gone")
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no successful run 30 s after NATS was repaired (%d endpoint runs)", n)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := streamMsgs(t, js); got != uint64(v2Conditions(t)) {
				t.Errorf("stream holds %d messages, want the %d conditions", got, v2Conditions(t))
			}
		})
	}
}

// TestFetcher_Sync_interrupted: a run stopped during an endpoint (the
// process shutting down as its MCP client went away) is no failure of it:
// the next run syncs it at once instead of backing off for minutes with
// the endpoint missing from the catalogue, and until then its state says
// it was never tried (readiness waits for it).
func TestFetcher_Sync_interrupted(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	up.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path != "/v2/conditions/" {
			return false
		}
		stop() // the process stops while this endpoint is read
		<-r.Context().Done()
		return true
	}, nil, nil)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/spells", "v2/conditions")})
	if _, err := f.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: %v, want context.Canceled", err)
	}
	if st := state(t, js, "sync.v2.conditions"); st.GetBackoffUntil() != nil || st.GetLastError() != "" || st.GetLastAttempt() != nil {
		t.Errorf("conditions after the interruption: backoff %v, error %q, last attempt %v; want none", st.GetBackoffUntil(), st.GetLastError(), st.GetLastAttempt())
	}

	up.set(nil, nil, nil)
	sum := mustSync(t, f)
	for _, es := range sum.Endpoints {
		if es.Skipped {
			t.Errorf("%s skipped after the interruption: %v", es.Endpoint, es.Err)
		}
	}
	if st := state(t, js, "sync.v2.conditions"); len(st.GetEntities()) != v2Conditions(t) || st.GetLastAttempt() == nil {
		t.Errorf("conditions after the next run: %d entities of %d, last attempt %v", len(st.GetEntities()), v2Conditions(t), st.GetLastAttempt())
	}
}

// runPages is how many pages a run of the fetcher over eps reads at 500 a
// page: the catalogue's lists, the endpoints' pages, and the v1 records
// the SRD 5.1 cross-check reads, when the run does not read them anyway.
func runPages(t *testing.T, eps ...string) int {
	t.Helper()
	n := len(open5e.MetadataEndpoints)
	for _, ep := range endpoints(eps...) {
		if other, ok := open5e.SRDOtherSource(ep); ok && !slices.Contains(eps, other.Version+"/"+other.Name) {
			n += (recorded(t, other.Version+"/"+other.Name) + 499) / 500
		}
	}
	for _, ep := range eps {
		n += (recorded(t, ep) + 499) / 500
	}
	return n
}

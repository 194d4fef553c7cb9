package orcbrew_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/edn"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// runWatcher runs a watcher until the test ends (or stop is called).
func runWatcher(t testing.TB, js jetstream.JetStream, opts *orcbrew.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- orcbrew.NewWatcher(js, opts).Run(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return stop
}

// stream reads the ENTITIES stream from a sequence on.
type stream struct {
	t    *testing.T
	js   jetstream.JetStream
	next uint64
}

func newStream(t *testing.T, js jetstream.JetStream) *stream {
	return &stream{t: t, js: js, next: 1}
}

// events are the stream's new messages since the last call: upserts by
// key and tombstoned keys, sorted.
type events struct {
	upserts    map[string]*lkv1.Entity
	tombstones []string
}

func (s *stream) read() events {
	s.t.Helper()
	ctx := s.t.Context()
	st, err := s.js.Stream(ctx, ingest.StreamName)
	if err != nil {
		s.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	ev := events{upserts: map[string]*lkv1.Entity{}}
	for ; s.next <= info.State.LastSeq; s.next++ {
		m, err := st.GetMsg(ctx, s.next)
		if err != nil {
			s.t.Fatal(err)
		}
		var e lkv1.EntityEvent
		if err := proto.Unmarshal(m.Data, &e); err != nil {
			s.t.Fatal(err)
		}
		switch x := e.GetEvent().(type) {
		case *lkv1.EntityEvent_Upsert:
			if want := lkv1.Subject(lkv1.Source_SOURCE_ORCBREW, x.Upsert.GetKind()); m.Subject != want {
				s.t.Errorf("upsert %s on subject %s, want %s", x.Upsert.GetKey(), m.Subject, want)
			}
			ev.upserts[x.Upsert.GetKey()] = x.Upsert
		case *lkv1.EntityEvent_Tombstone:
			ev.tombstones = append(ev.tombstones, x.Tombstone.GetKey())
		}
	}
	sort.Strings(ev.tombstones)
	return ev
}

func put(t *testing.T, js jetstream.JetStream, name string, data []byte) string {
	t.Helper()
	info, err := orcbrew.Put(t.Context(), js, name, bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Digest != orcbrew.Digest(data) {
		t.Fatalf("object digest %s, Digest() says %s", info.Digest, orcbrew.Digest(data))
	}
	return info.Digest
}

// waitState waits until the status of object satisfies ok, and returns it
// (nil when ok accepts that there is none).
func waitState(t *testing.T, js jetstream.JetStream, object string, ok func(*lkv1.ImportState) bool) *lkv1.ImportState {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		all, err := orcbrew.Statuses(t.Context(), js)
		if err != nil {
			t.Fatal(err)
		}
		var st *lkv1.ImportState
		for _, s := range all {
			if s.GetObject() == object {
				st = s
			}
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status of %s never came: last %v", object, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func digestIs(d string) func(*lkv1.ImportState) bool {
	return func(s *lkv1.ImportState) bool { return s != nil && s.GetDigest() == d }
}

func gone(s *lkv1.ImportState) bool { return s == nil }

func keysOf[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// TestWatcher_Samples imports every sample through the bucket and checks
// the status and the stream against the decode table.
func TestWatcher_Samples(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	reg := prometheus.NewRegistry()
	runWatcher(t, js, &orcbrew.Options{Metrics: orcbrew.NewMetrics(reg)})
	s := newStream(t, js)

	wantStatus := map[bool]lkv1.ImportState_Status{false: lkv1.ImportState_STATUS_OK, true: lkv1.ImportState_STATUS_PARTIAL}
	var total int
	for _, set := range []struct {
		dir   string
		cases []fileCase
	}{{good, goodFiles}, {bad, badFiles}} {
		for _, tt := range set.cases {
			data := sampleData(t, set.dir, tt.file)
			st := waitState(t, js, tt.file, digestIs(put(t, js, tt.file, data)))
			ev := s.read()
			if tt.wantErr != "" {
				if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), tt.wantErr) {
					t.Errorf("%s: got %v %q, want FAILED with %q", tt.file, st.GetStatus(), st.GetError(), tt.wantErr)
				}
				if len(ev.upserts)+len(ev.tombstones) != 0 {
					t.Errorf("%s: a failed import published %d upserts, %d tombstones", tt.file, len(ev.upserts), len(ev.tombstones))
				}
				continue
			}
			if got, want := st.GetStatus(), wantStatus[tt.wantWarns > 0]; got != want {
				t.Errorf("%s: status %v, want %v (%q)", tt.file, got, want, st.GetWarnings())
			}
			if !maps.Equal(st.GetCounts(), tt.wantCounts) || !slices.Equal(st.GetBooks(), tt.wantBooks) || len(st.GetWarnings()) != tt.wantWarns {
				t.Errorf("%s: counts %v books %q warnings %d, want %v %q %d", tt.file, st.GetCounts(), st.GetBooks(), len(st.GetWarnings()), tt.wantCounts, tt.wantBooks, tt.wantWarns)
			}
			if got := keysOf(ev.upserts); !slices.Equal(got, st.GetEntityKeys()) {
				t.Errorf("%s: stream has upserts %q, status lists %q", tt.file, got, st.GetEntityKeys())
			}
			if len(ev.tombstones) != 0 {
				t.Errorf("%s: unexpected tombstones %q", tt.file, ev.tombstones)
			}
			total += len(ev.upserts)
		}
	}
	all, err := orcbrew.Statuses(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), len(goodFiles)+len(badFiles); got != want {
		t.Errorf("Statuses: got %d, want %d", got, want)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("metrics lint: %v %v", problems, err)
	}
	if got, want := testutil.ToFloat64(counterOf(t, reg, "lorekeeper_ingest_orcbrew_imports_total", "outcome", "failed")), 4.0; got != want {
		t.Errorf("failed imports metric: got %v, want %v", got, want)
	}
	t.Logf("%d entities from %d objects", total, len(all))
}

// counterOf finds one labelled series in reg as a prometheus.Collector
// that testutil.ToFloat64 can read.
func counterOf(t *testing.T, reg *prometheus.Registry, name, label, value string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
					c.Add(m.GetCounter().GetValue())
					return c
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return nil
}

// TestWatcher_Lifecycle takes one object through update, a broken
// version, a repair, a restart, and deletion, checking the stream and the
// status after each step.
func TestWatcher_Lifecycle(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	stop := runWatcher(t, js, nil)
	s := newStream(t, js)
	const obj = "pack.orcbrew"
	v1 := readSample(t, filepath.Join(good, "lorekeeper-mcp_sample.orcbrew"))
	other := readSample(t, filepath.Join(good, "orcpub-dmv_demo-content.orcbrew"))

	// 1. A good version, and an unrelated object beside it.
	st := waitState(t, js, obj, digestIs(put(t, js, obj, v1)))
	waitState(t, js, "other.orcbrew", digestIs(put(t, js, "other.orcbrew", other)))
	ev := s.read()
	wantV1 := []string{
		"orcbrew:test-content-pack:creature:adult-red-dragon", "orcbrew:test-content-pack:creature:goblin",
		"orcbrew:test-content-pack:spell:fireball", "orcbrew:test-content-pack:spell:magic-missile",
	}
	if got := st.GetEntityKeys(); !slices.Equal(got, wantV1) || st.GetStatus() != lkv1.ImportState_STATUS_OK {
		t.Fatalf("v1: keys %q status %v, want %q OK", got, st.GetStatus(), wantV1)
	}
	if got := len(ev.upserts); got != 7 {
		t.Errorf("v1 + other: %d upserts, want 7", got)
	}
	if g := ev.upserts["orcbrew:test-content-pack:creature:goblin"].GetCreature(); g.GetChallengeRatingText() != "1/4" || g.GetSize() != "small" {
		t.Errorf("goblin on the stream: %v", g)
	}

	// 2. Update: the dragon goes, fireball changes, a spell is added.
	v2 := bytes.Replace(v1, []byte(`:dragon-red-adult`), []byte(`:unused`), 1)
	v2 = bytes.Replace(v2, []byte(`:name "Adult Red Dragon"`), []byte(`:name nil`), 1)
	v2 = bytes.Replace(v2, []byte(`A bright streak`), []byte(`A brighter streak`), 1)
	v2 = bytes.Replace(v2, []byte(`:fireball`), []byte(`:light {:key :light :name "Light" :level 0 :school :evocation} :fireball`), 1)
	st = waitState(t, js, obj, digestIs(put(t, js, obj, v2)))
	ev = s.read()
	if got, want := ev.tombstones, []string{"orcbrew:test-content-pack:creature:adult-red-dragon"}; !slices.Equal(got, want) {
		t.Errorf("v2 tombstones: got %q, want %q", got, want)
	}
	if fb := ev.upserts["orcbrew:test-content-pack:spell:fireball"]; !strings.Contains(fb.GetDescription(), "brighter") {
		t.Errorf("v2: fireball upsert %v, want the new text", fb)
	}
	if _, ok := ev.upserts["orcbrew:test-content-pack:spell:light"]; !ok {
		t.Errorf("v2: no upsert of the new spell; got %q", keysOf(ev.upserts))
	}
	if st.GetStatus() != lkv1.ImportState_STATUS_PARTIAL || len(st.GetEntityKeys()) != 4 || !strings.Contains(strings.Join(st.GetWarnings(), ""), "no :name") {
		t.Errorf("v2 status: %v", st)
	}
	v2Keys := st.GetEntityKeys()

	// 3. A broken version: nothing is published, the good entities stay
	// recorded, and the error says what is wrong.
	broken := v2[:len(v2)/2]
	st = waitState(t, js, obj, digestIs(put(t, js, obj, broken)))
	ev = s.read()
	if len(ev.upserts)+len(ev.tombstones) != 0 {
		t.Errorf("broken: published %d upserts, %d tombstones; want none", len(ev.upserts), len(ev.tombstones))
	}
	if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), "unexpected end of input") || !slices.Equal(st.GetEntityKeys(), v2Keys) {
		t.Errorf("broken status: %v", st)
	}

	// 4. Repaired with the same content as v2: the entities come back as
	// upserts (deduplicated by JetStream), nothing is tombstoned.
	st = waitState(t, js, obj, digestIs(put(t, js, obj, v2)))
	ev = s.read()
	if len(ev.tombstones) != 0 || st.GetStatus() != lkv1.ImportState_STATUS_PARTIAL || !slices.Equal(st.GetEntityKeys(), v2Keys) {
		t.Errorf("repaired: tombstones %q, status %v", ev.tombstones, st)
	}

	// 5. Restart: a new watcher finds everything done and publishes nothing.
	stop()
	stop = runWatcher(t, js, nil)
	put(t, js, "marker.orcbrew", []byte(`{"Marker" {:orcpub.dnd.e5/feats {:m {:name "Marker"}}}}`))
	waitState(t, js, "marker.orcbrew", func(s *lkv1.ImportState) bool { return s != nil })
	if ev = s.read(); !slices.Equal(keysOf(ev.upserts), []string{"orcbrew:marker:feat:marker"}) || len(ev.tombstones) != 0 {
		t.Errorf("restart: got upserts %q tombstones %q, want only the marker", keysOf(ev.upserts), ev.tombstones)
	}

	// 6. Delete while no watcher runs: the next one tombstones it all.
	stop()
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	runWatcher(t, js, nil)
	waitState(t, js, obj, gone)
	ev = s.read()
	if !slices.Equal(ev.tombstones, v2Keys) || len(ev.upserts) != 0 {
		t.Errorf("delete: tombstones %q upserts %q, want tombstones %q", ev.tombstones, keysOf(ev.upserts), v2Keys)
	}
	// The other object is untouched.
	if st := waitState(t, js, "other.orcbrew", func(s *lkv1.ImportState) bool { return s != nil }); st.GetStatus() != lkv1.ImportState_STATUS_OK || len(st.GetEntityKeys()) != 3 {
		t.Errorf("other object: %v", st)
	}
}

// TestWatcher_BrokenReplacesGood replaces a good object with each broken
// sample that fails as a whole: the good entities stay, per file.
func TestWatcher_BrokenReplacesGood(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, nil)
	s := newStream(t, js)
	good := readSample(t, filepath.Join(good, "orcpub-dmv_demo-content.orcbrew"))
	const obj = "homebrew.orcbrew"
	want := waitState(t, js, obj, digestIs(put(t, js, obj, good))).GetEntityKeys()
	s.read()
	for _, tt := range badFiles {
		if tt.wantErr == "" {
			continue
		}
		st := waitState(t, js, obj, digestIs(put(t, js, obj, sampleData(t, bad, tt.file))))
		if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), tt.wantErr) || !slices.Equal(st.GetEntityKeys(), want) {
			t.Errorf("%s over a good object: status %v", tt.file, st)
		}
		if ev := s.read(); len(ev.tombstones)+len(ev.upserts) != 0 {
			t.Errorf("%s over a good object: published %q %q", tt.file, ev.tombstones, keysOf(ev.upserts))
		}
	}
	// Deleting it now still removes the good version's entities.
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, obj, gone)
	if ev := s.read(); !slices.Equal(ev.tombstones, want) {
		t.Errorf("delete after failures: tombstones %q, want %q", ev.tombstones, want)
	}
}

// TestWatcher_SharedEntities: two objects bringing the same entity; deleting
// one must not tombstone what the other still holds.
func TestWatcher_SharedEntities(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, nil)
	s := newStream(t, js)
	data := readSample(t, filepath.Join(good, "orcpub-dmv_demo-content.orcbrew"))
	waitState(t, js, "a.orcbrew", digestIs(put(t, js, "a.orcbrew", data)))
	st := waitState(t, js, "b.orcbrew", digestIs(put(t, js, "b.orcbrew", data)))
	if len(st.GetWarnings()) != 3 || !strings.Contains(st.GetWarnings()[0], "also imported from a.orcbrew") {
		t.Errorf("b: warnings %q, want 3 about a.orcbrew", st.GetWarnings())
	}
	s.read()
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(t.Context(), "a.orcbrew"); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, "a.orcbrew", gone)
	if ev := s.read(); len(ev.tombstones) != 0 {
		t.Errorf("deleting a: tombstones %q, want none (b holds them)", ev.tombstones)
	}
	if err := obs.Delete(t.Context(), "b.orcbrew"); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, "b.orcbrew", gone)
	if ev := s.read(); len(ev.tombstones) != 3 {
		t.Errorf("deleting b: tombstones %q, want 3", ev.tombstones)
	}
}

var ednOptionsSmall = edn.Options{MaxSize: 1024}

func TestWatcher_SizeLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, &orcbrew.Options{Parse: &ednOptionsSmall})
	data := readSample(t, filepath.Join(good, "jnwhiteh-orcbrew-utils_example.orcbrew"))
	st := waitState(t, js, "big.orcbrew", digestIs(put(t, js, "big.orcbrew", data)))
	if st.GetStatus() != lkv1.ImportState_STATUS_FAILED || !strings.Contains(st.GetError(), "over the limit of 1024") {
		t.Errorf("status %v, want FAILED over the limit", st)
	}
}

func TestPutDirAndMirror(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	ctx := t.Context()
	dir := t.TempDir()
	for _, f := range []string{"orcpub-dmv_demo-content.orcbrew", "lorekeeper-mcp_sample.orcbrew"} {
		if err := os.WriteFile(filepath.Join(dir, f), readSample(t, filepath.Join(good, f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not orcbrew"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := orcbrew.PutDir(ctx, js, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lorekeeper-mcp_sample.orcbrew", "orcpub-dmv_demo-content.orcbrew"}; !slices.Equal(names, want) {
		t.Errorf("PutDir: got %q, want %q", names, want)
	}
	if _, err := orcbrew.PutDir(ctx, js, t.TempDir(), nil); err == nil {
		t.Error("PutDir of an empty dir: got no error")
	}

	// A mirror of another folder: puts its files, later deletes only its own.
	mdir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(mdir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Minute) // settled
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	objects := func() []string {
		t.Helper()
		obs, err := js.ObjectStore(ctx, ingest.OrcBrewBucket)
		if err != nil {
			t.Fatal(err)
		}
		infos, err := obs.List(ctx)
		if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
			t.Fatal(err)
		}
		var out []string
		for _, i := range infos {
			out = append(out, i.Name)
		}
		sort.Strings(out)
		return out
	}
	opts := &orcbrew.MirrorOptions{Settle: time.Second}
	write("mine.orcbrew", []byte(`{"Mine" {:orcpub.dnd.e5/feats {:a {:name "A"}}}}`))
	if err := os.WriteFile(filepath.Join(mdir, "fresh.orcbrew"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := orcbrew.SyncDir(ctx, js, mdir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Put, []string{"mine.orcbrew"}) {
		t.Errorf("pass 1 put %q, want only the settled file", res.Put)
	}
	res, err = orcbrew.SyncDir(ctx, js, mdir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Put) != 0 || !slices.Equal(res.Unchanged, []string{"mine.orcbrew"}) {
		t.Errorf("pass 2: put %q unchanged %q, want nothing put", res.Put, res.Unchanged)
	}
	write("mine.orcbrew", []byte(`{"Mine" {:orcpub.dnd.e5/feats {:a {:name "A2"}}}}`))
	if err := os.Remove(filepath.Join(mdir, "fresh.orcbrew")); err != nil {
		t.Fatal(err)
	}
	if res, err = orcbrew.SyncDir(ctx, js, mdir, opts); err != nil || !slices.Equal(res.Put, []string{"mine.orcbrew"}) {
		t.Errorf("pass 3: put %v (%v), want the changed file", res, err)
	}
	if err := os.Remove(filepath.Join(mdir, "mine.orcbrew")); err != nil {
		t.Fatal(err)
	}
	if res, err = orcbrew.SyncDir(ctx, js, mdir, opts); err != nil || !slices.Equal(res.Deleted, []string{"mine.orcbrew"}) {
		t.Errorf("pass 4: %v (%v), want mine.orcbrew deleted", res, err)
	}
	if got, want := objects(), []string{"lorekeeper-mcp_sample.orcbrew", "orcpub-dmv_demo-content.orcbrew"}; !slices.Equal(got, want) {
		t.Errorf("bucket after the mirror: %q, want the imported files kept: %q", got, want)
	}
}

func TestMirrorDir_ImportsEndToEnd(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, nil)
	dir := t.TempDir()
	data := readSample(t, filepath.Join(good, "orcpub-dmv_extensibility-fixtures.orcbrew"))
	p := filepath.Join(dir, "ext.orcbrew")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- orcbrew.MirrorDir(ctx, js, dir, &orcbrew.MirrorOptions{Interval: 50 * time.Millisecond, Settle: time.Millisecond})
	}()
	st := waitState(t, js, "ext.orcbrew", digestIs(orcbrew.Digest(data)))
	if got, want := st.GetCounts(), map[string]uint64{"boon": 1, "invocation": 1, "subclass": 1, "subrace": 1}; !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, "ext.orcbrew", gone)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("MirrorDir: %v", err)
	}
}

func TestStateKey(t *testing.T) {
	tests := []struct{ a, b string }{{"a.orcbrew", "a_orcbrew"}, {"x y.orcbrew", "x_y.orcbrew"}, {"Ü.orcbrew", "_.orcbrew"}}
	for _, tt := range tests {
		ka, kb := orcbrew.StateKey(tt.a), orcbrew.StateKey(tt.b)
		if ka == kb {
			t.Errorf("StateKey(%q) == StateKey(%q) == %s", tt.a, tt.b, ka)
		}
		for _, k := range []string{ka, kb} {
			tok := strings.TrimPrefix(k, "import.")
			if !strings.HasPrefix(k, "import.") || strings.ContainsAny(tok, ". *>") {
				t.Errorf("StateKey: %q is not import.<token>", k)
			}
		}
	}
}

func TestWatcher_WarningsAreCapped(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, nil)
	var b strings.Builder
	b.WriteString(`{"Many" {:orcpub.dnd.e5/spells {:ok {:name "Ok"} `)
	for i := range 150 {
		fmt.Fprintf(&b, ":s%d {:name nil} ", i)
	}
	b.WriteString(`}}}`)
	data := []byte(b.String())
	st := waitState(t, js, "many.orcbrew", digestIs(put(t, js, "many.orcbrew", data)))
	if got := len(st.GetWarnings()); got != 101 || !strings.Contains(st.GetWarnings()[100], "and 50 more warnings") {
		t.Errorf("got %d warnings ending %q, want 100 and a count of the rest", got, st.GetWarnings()[got-1])
	}
	if st.GetStatus() != lkv1.ImportState_STATUS_PARTIAL || st.GetCounts()["spell"] != 1 {
		t.Errorf("status %v counts %v, want PARTIAL with 1 spell", st.GetStatus(), st.GetCounts())
	}
}

// TestWatcher_EntityOverServerLimit: with the string limit raised, the
// 3 MiB spell parses but cannot be published (the server's max payload is
// 1 MiB): it is skipped and reported, and the rest of the file imports.
func TestWatcher_EntityOverServerLimit(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	runWatcher(t, js, &orcbrew.Options{Parse: &edn.Options{MaxStringLen: 4 << 20}})
	s := newStream(t, js)
	data := bytes.Replace(hugeString(), []byte(`{:endless-litany`), []byte(`{:small {:name "Small"} :endless-litany`), 1)
	st := waitState(t, js, "huge.orcbrew", digestIs(put(t, js, "huge.orcbrew", data)))
	if st.GetStatus() != lkv1.ImportState_STATUS_PARTIAL || len(st.GetWarnings()) != 1 ||
		!strings.Contains(st.GetWarnings()[0], "orcbrew:huge-pack:spell:endless-litany") || !strings.Contains(st.GetWarnings()[0], "over the server's message limit") {
		t.Errorf("status %v warnings %q, want PARTIAL naming the big spell", st.GetStatus(), st.GetWarnings())
	}
	if got, want := st.GetCounts()["spell"], uint64(1); got != want {
		t.Errorf("spells imported: got %d, want %d", got, want)
	}
	if got := keysOf(s.read().upserts); !slices.Equal(got, []string{"orcbrew:huge-pack:spell:small"}) {
		t.Errorf("upserts %q, want only the small spell", got)
	}
}

// TestWatcher_ForgetsVanishedObjects: a status whose object is not in the
// bucket at all (the bucket was recreated, say) is treated as a deletion.
func TestWatcher_ForgetsVanishedObjects(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	kv, err := js.KeyValue(t.Context(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"orcbrew:old:spell:a", "orcbrew:old:creature:b"}
	b, err := proto.Marshal(&lkv1.ImportState{Object: "vanished.orcbrew", Status: lkv1.ImportState_STATUS_OK, EntityKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), orcbrew.StateKey("vanished.orcbrew"), b); err != nil {
		t.Fatal(err)
	}
	s := newStream(t, js)
	runWatcher(t, js, nil)
	waitState(t, js, "vanished.orcbrew", gone)
	if got, want := s.read().tombstones, []string{"orcbrew:old:creature:b", "orcbrew:old:spell:a"}; !slices.Equal(got, want) {
		t.Errorf("tombstones %q, want %q", got, want)
	}
}

// TestWatcher_BackAfterDelete puts a file, deletes it and puts the same
// bytes back within the stream's duplicate window: the entities are
// upserted again, not dropped as duplicates of their first upserts. A retry
// of one import (the same object version imported again) stays a duplicate.
func TestWatcher_BackAfterDelete(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	stop := runWatcher(t, js, nil)
	s := newStream(t, js)
	const obj = "pack.orcbrew"
	data := readSample(t, filepath.Join(good, "lorekeeper-mcp_sample.orcbrew"))
	want := waitState(t, js, obj, digestIs(put(t, js, obj, data))).GetEntityKeys()
	if got := keysOf(s.read().upserts); len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("first put: upserts %q, want %q", got, want)
	}

	// A retry: the watcher restarts without the record of the import (as
	// if it stopped between the publish and the status) and imports the
	// same version again; JetStream drops every upsert.
	stop()
	kv, err := js.KeyValue(t.Context(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(t.Context(), orcbrew.StateKey(obj)); err != nil {
		t.Fatal(err)
	}
	stop = runWatcher(t, js, nil)
	waitState(t, js, obj, func(st *lkv1.ImportState) bool { return st != nil })
	if ev := s.read(); len(ev.upserts)+len(ev.tombstones) != 0 {
		t.Errorf("retried import: %d upserts %d tombstones on the stream, want none", len(ev.upserts), len(ev.tombstones))
	}

	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if err := obs.Delete(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		waitState(t, js, obj, gone)
		if got := s.read().tombstones; !slices.Equal(got, want) {
			t.Fatalf("delete %d: tombstones %q, want %q", round, got, want)
		}
		waitState(t, js, obj, digestIs(put(t, js, obj, data)))
		if got := keysOf(s.read().upserts); !slices.Equal(got, want) {
			t.Errorf("put back %d: upserts %q, want %q", round, got, want)
		}
	}
	stop()
}

// TestWatcher_NewDecoderReadsAgain: a file imported by an older decoder is
// read again at the next start (the new decoder may fill in more, such as
// a monster's XP), though its bytes did not change.
func TestWatcher_NewDecoderReadsAgain(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	stop := runWatcher(t, js, nil)
	const obj = "pack.orcbrew"
	data := readSample(t, filepath.Join(good, "lorekeeper-mcp_sample.orcbrew"))
	st := waitState(t, js, obj, digestIs(put(t, js, obj, data)))
	if st.GetDecoder() != orcbrew.DecoderVersion {
		t.Fatalf("decoder %d recorded, want %d", st.GetDecoder(), orcbrew.DecoderVersion)
	}
	stop()

	// As an older decoder left it.
	st.Decoder = orcbrew.DecoderVersion - 1
	b, err := proto.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), orcbrew.StateKey(obj), b); err != nil {
		t.Fatal(err)
	}
	runWatcher(t, js, nil)
	again := waitState(t, js, obj, func(s *lkv1.ImportState) bool { return s.GetDecoder() == orcbrew.DecoderVersion })
	if !again.GetImportedAt().AsTime().After(st.GetImportedAt().AsTime()) || !slices.Equal(again.GetEntityKeys(), st.GetEntityKeys()) {
		t.Errorf("not read again: imported at %v (first %v), keys %q (first %q)", again.GetImportedAt().AsTime(), st.GetImportedAt().AsTime(), again.GetEntityKeys(), st.GetEntityKeys())
	}
	// The same entities read the same way are the same messages, which
	// the stream drops as duplicates; what a new decoder reads differently
	// has another content hash, so another message ID, and is stored.
}

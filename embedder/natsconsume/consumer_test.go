package natsconsume_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/modeltest"
	"lorekeeper.dev/embedder/natsconsume"
	"lorekeeper.dev/embedder/onnx"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/embeddedindex"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// startJetStream runs an in-process NATS server with JetStream and creates
// the stream and buckets.
func startJetStream(t testing.TB) (string, jetstream.JetStream) {
	t.Helper()
	s := ingesttest.Server(t, &server.Options{MaxPayload: 8 << 20})
	js := ingesttest.Connect(t, s.ClientURL())
	if err := ingest.EnsureResources(t.Context(), js, 1); err != nil {
		t.Fatal(err)
	}
	return s.ClientURL(), js
}

var (
	modelOnce sync.Once
	model     *onnx.Model
	modelErr  error
)

// testModel is the real model `make model` installed, shared by the tests.
func testModel(t testing.TB) *onnx.Model {
	t.Helper()
	modelOnce.Do(func() {
		model, modelErr = onnx.Open(modeltest.Dir(), nil)
	})
	if modelErr != nil {
		t.Fatalf("%v", modelErr)
	}
	return model
}

func openStore(t testing.TB, dir string) *badgerstore.Store {
	t.Helper()
	return openStoreFor(t, dir, testModel(t).Info().Name)
}

// openStoreFor opens the store at dir writing vectors of the named model.
func openStoreFor(t testing.TB, dir, modelName string) *badgerstore.Store {
	t.Helper()
	info := testModel(t).Info()
	idx, err := embeddedindex.Open(&vectorindex.Options{Dimensions: info.Dimensions, Model: modelName, Fields: badgerstore.PayloadFields()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := badgerstore.Open(dir, idx, &badgerstore.Options{Model: modelName})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var (
	snapshotOnce sync.Once
	snapshot     []*lkv1.Entity
	snapshotErr  error
)

func snapshotEntities(t testing.TB) []*lkv1.Entity {
	t.Helper()
	snapshotOnce.Do(func() { snapshot, snapshotErr = open5e.SnapshotEntities(context.Background()) })
	if snapshotErr != nil {
		t.Fatal(snapshotErr)
	}
	return snapshot
}

// publish puts upserts of es on the stream and waits for every ack.
func publish(t testing.TB, js jetstream.JetStream, es []*lkv1.Entity) {
	t.Helper()
	var futures []jetstream.PubAckFuture
	for _, e := range es {
		m, err := ingest.UpsertMsg(e, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		f, err := js.PublishMsgAsync(m)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("publish ack timed out")
		}
	}
}

// runConsumer runs c until ctx ends; the returned func stops it and waits.
func runConsumer(t testing.TB, c *natsconsume.Consumer) func() {
	t.Helper()
	cons, err := c.Ensure(t.Context(), ingest.StreamName, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, cons) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// waitFor polls cond; the bound is generous, the test asserts no timing.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	// The whole catalogue embeds in a few minutes under the race detector.
	deadline := time.Now().Add(15 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestConsumer_FullSnapshot(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)
	publish(t, js, es)
	st := openStore(t, t.TempDir())
	defer st.Close()
	stop := runConsumer(t, natsconsume.New(js, st, testModel(t), nil))
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities >= len(es) })
	stop()

	stats := st.Stats()
	if stats.Entities != len(es) || stats.Vectors != len(es) {
		t.Errorf("stored %d entities and %d vectors, want %d of each (as published)", stats.Entities, stats.Vectors, len(es))
	}
	// Every entity is stored whole, and its vector is in the index.
	for _, e := range es[:50] {
		got, err := st.Get(t.Context(), e.GetKey())
		if err != nil {
			t.Fatalf("Get(%s): %v", e.GetKey(), err)
		}
		if !proto.Equal(got, e) {
			t.Errorf("%s stored differs from what was published", e.GetKey())
		}
	}
	hits, err := st.VectorIndex().Search(t.Context(), mustEmbed(t, "fireball"), &vectorindex.Filter{IDs: []string{"open5e_v2:srd-2014:spell:fireball"}}, 1)
	if err != nil || len(hits) != 1 {
		t.Errorf("Fireball's vector is not in the index: %v, %v", hits, err)
	}
}

func mustEmbed(t testing.TB, text string) []float32 {
	t.Helper()
	v, err := testModel(t).Embed(t.Context(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// crashingStore writes through to the real store, then cuts the consumer's
// NATS connection once: the write is durable but the acks are lost, as when
// the process dies between the two. It counts the writes of each key.
type crashingStore struct {
	*badgerstore.Store
	once  sync.Once
	crash func()

	mu      sync.Mutex
	applied map[string]int
}

func (s *crashingStore) Apply(ctx context.Context, ws []badgerstore.Write) error {
	err := s.Store.Apply(ctx, ws)
	s.mu.Lock()
	if s.applied == nil {
		s.applied = map[string]int{}
	}
	for _, w := range ws {
		s.applied[w.Entity.GetKey()]++
	}
	s.mu.Unlock()
	if s.crash != nil {
		s.once.Do(s.crash)
	}
	return err
}

func TestConsumer_CrashBetweenWriteAndAck(t *testing.T) {
	url, js := startJetStream(t)
	es := snapshotEntities(t)[:600]
	publish(t, js, es)
	dir := t.TempDir()

	// First life: the connection dies right after the first batch is written.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js1, _ := jetstream.New(nc)
	st := openStore(t, dir)
	cs := &crashingStore{Store: st, crash: nc.Close}
	opts := &natsconsume.Options{Batch: 100, AckWait: time.Second}
	stop := runConsumer(t, natsconsume.New(js1, cs, testModel(t), opts))
	waitFor(t, "the first batch written", func() bool { return st.Stats().Entities > 0 })
	stop()
	written := st.Stats().Entities
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Second life: a new process reopens the store and the durable consumer.
	st = openStore(t, dir)
	defer st.Close()
	if got := st.Stats().Entities; got != written {
		t.Fatalf("after reopening, %d entities; %d were written before the crash", got, written)
	}
	firstLife := cs.applied
	second := &crashingStore{Store: st}
	stop = runConsumer(t, natsconsume.New(ingesttest.Connect(t, url), second, testModel(t), opts))
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities >= len(es) })
	// Let redeliveries of the unacked first batch arrive and be applied.
	waitFor(t, "the first batch redelivered", func() bool {
		second.mu.Lock()
		defer second.mu.Unlock()
		for k := range firstLife {
			if second.applied[k] == 0 {
				return false
			}
		}
		return true
	})
	stop()

	// Every entity of the first batch was written twice: once before the
	// crash and once on redelivery. Each must still be indexed once, under
	// one slot, with one vector.
	if len(firstLife) == 0 {
		t.Fatal("nothing was written before the crash; the test tests nothing")
	}
	err = st.View(t.Context(), func(v *badgerstore.View) error {
		for _, e := range es {
			if n := v.Postings(badgerstore.FieldKey, strings.ToLower(e.GetKey())).Len(); n != 1 {
				t.Errorf("%s indexed %d times (written %d+%d times), want exactly once", e.GetKey(), n, firstLife[e.GetKey()], second.applied[e.GetKey()])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stats := st.Stats()
	kinds := 0
	for _, n := range stats.Kinds {
		kinds += n
	}
	if stats.Entities != len(es) || stats.Vectors != len(es) || kinds != len(es) {
		t.Errorf("stats: %d entities, %d vectors, %d by kind; want %d of each", stats.Entities, stats.Vectors, kinds, len(es))
	}
	if n, err := st.VectorIndex().Count(t.Context()); err != nil || n != len(es) {
		t.Errorf("vector index holds %d points (%v), want %d", n, err, len(es))
	}
}

// failingStore refuses any write that includes key.
type failingStore struct {
	*badgerstore.Store
	key string
}

func (s *failingStore) Apply(ctx context.Context, ws []badgerstore.Write) error {
	for _, w := range ws {
		if w.Entity.GetKey() == s.key {
			return errors.New("disk says no to " + s.key)
		}
	}
	return s.Store.Apply(ctx, ws)
}

func TestConsumer_PoisonMessagesGoToDeadLetters(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:40]
	publish(t, js, es[:20])
	// Garbage on an entity subject, and an entity the store always refuses.
	if _, err := js.Publish(t.Context(), lkv1.Subject(lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Kind_KIND_SPELL), []byte("\xff not a protobuf")); err != nil {
		t.Fatal(err)
	}
	publish(t, js, es[20:])
	refused := es[25].GetKey()

	st := openStore(t, t.TempDir())
	defer st.Close()
	opts := &natsconsume.Options{Batch: 16, MaxDeliver: 2}
	stop := runConsumer(t, natsconsume.New(js, &failingStore{Store: st, key: refused}, testModel(t), opts))

	dlq, err := js.Stream(t.Context(), natsconsume.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two dead letters", func() bool {
		info, err := dlq.Info(t.Context())
		return err == nil && info.State.Msgs >= 2
	})
	waitFor(t, "the other entities stored", func() bool { return st.Stats().Entities >= len(es)-1 })
	stop()

	if got, want := st.Stats().Entities, len(es)-1; got != want {
		t.Errorf("%d entities stored, want %d (all but the refused one)", got, want)
	}
	var reasons []string
	for seq := uint64(1); seq <= 2; seq++ {
		raw, err := dlq.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		dl := &lkv1.DeadLetter{}
		if err := proto.Unmarshal(raw.Data, dl); err != nil {
			t.Fatal(err)
		}
		if dl.GetStreamSequence() == 0 || len(dl.GetPayload()) == 0 || !strings.HasPrefix(dl.GetSubject(), lkv1.SubjectPrefix) {
			t.Errorf("dead letter lacks its origin: %+v", dl)
		}
		reasons = append(reasons, dl.GetError())
	}
	joined := strings.Join(reasons, " | ")
	if !strings.Contains(joined, "decode entity event") || !strings.Contains(joined, "disk says no to "+refused) {
		t.Errorf("dead-letter reasons = %q, want the decode error and the refused write", joined)
	}
}

func TestConsumer_TombstoneRemovesEverything(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:10]
	publish(t, js, es)
	gone := es[3]
	m, err := ingest.TombstoneMsg(&lkv1.Tombstone{Key: gone.GetKey(), Kind: gone.GetKind(), Source: gone.GetDocument().GetSource()}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, t.TempDir())
	defer st.Close()
	stop := runConsumer(t, natsconsume.New(js, st, testModel(t), nil))
	waitFor(t, "the stream consumed", func() bool { return st.Stats().Entities == len(es)-1 })
	stop()
	if _, err := st.Get(t.Context(), gone.GetKey()); !errors.Is(err, badgerstore.ErrNotFound) {
		t.Errorf("Get(%s) after its tombstone: %v, want ErrNotFound", gone.GetKey(), err)
	}
	hits, err := st.VectorIndex().Search(t.Context(), mustEmbed(t, gone.GetName()), &vectorindex.Filter{IDs: []string{gone.GetKey()}}, 1)
	if err != nil || len(hits) != 0 {
		t.Errorf("vector of %s still in the index: %v, %v", gone.GetKey(), hits, err)
	}
}

// TestConsumer_Reembed: entities stored with another model's vectors are
// written again with this model's, from the stored documents alone.
func TestConsumer_Reembed(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:30]
	dir := t.TempDir()
	// Stored by another model: vectors that are not this model's.
	old := openStoreFor(t, dir, "another-model")
	var ws []badgerstore.Write
	for _, e := range es {
		v := make([]float32, testModel(t).Info().Dimensions)
		v[0] = 1
		ws = append(ws, badgerstore.Write{Entity: e, Vector: v})
	}
	if err := old.Apply(t.Context(), ws); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, dir)
	defer st.Close()
	c := natsconsume.New(js, st, testModel(t), &natsconsume.Options{Batch: 8})
	var calls, last int
	if err := c.Reembed(t.Context(), st, func(done, total int) { calls, last = calls+1, done }); err != nil {
		t.Fatal(err)
	}
	if calls != 4 || last != len(es) {
		t.Errorf("progress called %d times ending at %d, want 4 ending at %d", calls, last, len(es))
	}
	// The stub vector [1, 0, ...] scores the same against every query; a
	// re-embedded vector scores its own name far above another entity's.
	own, err := st.VectorIndex().Search(t.Context(), mustEmbed(t, strings.ToLower(es[0].GetName())), &vectorindex.Filter{IDs: []string{es[0].GetKey(), es[1].GetKey()}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 2 || own[0].ID != es[0].GetKey() || own[0].Score-own[1].Score < 0.05 {
		t.Errorf("after Reembed, %q does not rank its own entity first by a margin: %v", es[0].GetName(), own)
	}
}

// slowModel embeds with the real model, slower than the ack wait.
type slowModel struct {
	natsconsume.Model
	delay time.Duration
}

func (m slowModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(m.delay)
	return m.Model.Embed(ctx, texts)
}

// countingStore counts the writes of each key.
type countingStore struct {
	*badgerstore.Store
	mu     sync.Mutex
	writes map[string]int
}

func (s *countingStore) Apply(ctx context.Context, ws []badgerstore.Write) error {
	s.mu.Lock()
	for _, w := range ws {
		s.writes[w.Entity.GetKey()]++
	}
	s.mu.Unlock()
	return s.Store.Apply(ctx, ws)
}

// TestConsumer_SlowBatchIsNotRedelivered: a batch that takes longer than
// the ack wait to embed is kept alive by in-progress acks, so the server
// does not hand it to another puller of the same durable consumer (a
// process restarting while its predecessor drains) while it is written.
func TestConsumer_SlowBatchIsNotRedelivered(t *testing.T) {
	_, js := startJetStream(t)
	es := snapshotEntities(t)[:20]
	publish(t, js, es)
	st := &countingStore{Store: openStore(t, t.TempDir()), writes: map[string]int{}}
	defer st.Close()
	opts := &natsconsume.Options{Batch: 10, AckWait: time.Second}
	model := slowModel{Model: testModel(t), delay: 3 * opts.AckWait}
	// Two pullers take a batch each; the third waits, and would receive
	// any message whose ack wait ran out.
	for range 3 {
		stop := runConsumer(t, natsconsume.New(js, st, model, opts))
		defer stop()
	}
	waitFor(t, "every entity stored", func() bool { return st.Stats().Entities >= len(es) })
	// A redelivery, were there one, would be written by now.
	time.Sleep(model.delay + 2*opts.AckWait)
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range es {
		if n := st.writes[e.GetKey()]; n != 1 {
			t.Errorf("%s written %d times, want once (no redelivery of a batch in progress)", e.GetKey(), n)
		}
	}
}

// TestConsumer_IdleAsksOnce: a consumer that has caught up asks the server
// for the next message once per IdleWait, not once per MaxWait, and a
// message published while it waits is stored at once, not at IdleWait's
// end.
func TestConsumer_IdleAsksOnce(t *testing.T) {
	url, js := startJetStream(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var requests atomic.Int64
	sub, err := nc.Subscribe("$JS.API.CONSUMER.MSG.NEXT.>", func(*nats.Msg) { requests.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	es := snapshotEntities(t)[:10]
	publish(t, js, es[:5])
	st := openStore(t, t.TempDir())
	defer st.Close()
	stop := runConsumer(t, natsconsume.New(js, st, testModel(t), &natsconsume.Options{MaxWait: 50 * time.Millisecond, IdleWait: time.Hour}))
	defer stop()
	waitFor(t, "the first entities stored", func() bool { return st.Stats().Entities == 5 })
	time.Sleep(300 * time.Millisecond) // the fetch after the batch finds nothing
	before := requests.Load()
	time.Sleep(time.Second) // twenty MaxWaits
	if n := requests.Load() - before; n > 1 {
		t.Errorf("%d fetch requests in a second of idling, want at most 1 (one per IdleWait)", n)
	}

	publish(t, js, es[5:])
	deadline := time.Now().Add(time.Minute) // far less than IdleWait
	for st.Stats().Entities < len(es) {
		if time.Now().After(deadline) {
			t.Fatalf("stored %d of %d entities a minute after publishing them: the idle fetch did not take them", st.Stats().Entities, len(es))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

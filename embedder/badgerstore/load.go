// The load of the in-memory index at Open: entities read from Badger in key
// order, prepared in parallel, indexed one at a time in that order.

package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/vectorindex"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// loadBatch is a run of stored entities in key order: read by one
// goroutine, decoded and prepared by a worker, indexed by the load.
type loadBatch struct {
	keys  []string
	docs  [][]byte
	vecs  [][]float32
	ents  []*lkv1.Entity
	preps []prepared
	pays  []vectorindex.Payload
	err   error
	done  chan struct{}
}

// loadBatchSize is how many entities a batch carries.
const loadBatchSize = 256

// load builds the in-memory index from the stored entities and loads their
// vectors into the vector index, then puts the index in place. An entity
// that cannot be read, or a count other than check's, is ErrDamaged.
//
// Deriving what an entity is indexed under (its fields, its BM25 terms
// from its embedding text) costs most of a load, and is the entity's
// alone: workers do it in parallel, while one goroutine reads Badger (each
// entity's vector from a second iterator walking beside the first, not a
// lookup each) and this one fills the index in key order, so slots are
// given as a serial load gives them.
func (s *Store) load(opts *Options) error {
	mem := newMemIndex()
	// withVecs: the vectors go to the vector index (flush may drop it).
	withVecs := !opts.NoIndexReload && s.idx != nil
	quit := make(chan struct{})
	todo := make(chan *loadBatch, 4)
	ordered := make(chan *loadBatch, 8)
	var readErr error
	go func() {
		defer close(ordered)
		defer close(todo)
		readErr = s.readBatches(quit, todo, ordered)
	}()
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range todo {
				prepareBatch(b, withVecs)
			}
		}()
	}

	ctx := context.Background()
	var points []vectorindex.Point
	flush := func() error {
		if len(points) == 0 || s.idx == nil {
			points = points[:0]
			return nil
		}
		err := s.idx.Upsert(ctx, points)
		points = points[:0]
		if errors.Is(err, vectorindex.ErrDimensionMismatch) {
			// The vectors are from another model; re-embedding replaces them.
			s.logger.Warn("stored vectors do not fit the vector index; not loaded", "err", err)
			s.idx = nil
			return nil
		}
		if err != nil {
			return fmt.Errorf("load vectors into the index: %w", err)
		}
		return nil
	}
	var err error
	stop := func(e error) {
		if err == nil {
			err = e
			close(quit)
		}
	}
	for b := range ordered {
		<-b.done
		if err != nil {
			continue // drain, so the reader ends
		}
		if b.err != nil {
			stop(b.err)
			continue
		}
		if s.stopLoad.Load() {
			stop(errLoadStopped)
			continue
		}
		for i, e := range b.ents {
			mem.putPrepared(e, b.vecs[i], b.preps[i])
			s.loading.Add(1)
			if b.vecs[i] != nil && withVecs && s.idx != nil {
				points = append(points, vectorindex.Point{ID: e.GetKey(), Vector: b.vecs[i], Payload: b.pays[i]})
			}
		}
		if len(points) >= 512 {
			if ferr := flush(); ferr != nil {
				stop(ferr)
			}
		}
	}
	wg.Wait()
	if err == nil {
		err = readErr
	}
	if err != nil {
		if errors.Is(err, errLoadStopped) {
			return err
		}
		return fmt.Errorf("load store: %w", err)
	}
	if n := len(mem.bySlot); n != s.stored {
		return fmt.Errorf("%w: %s held %d entities when opened, but %d could be read", ErrDamaged, s.dir, s.stored, n)
	}
	mem.finish()
	if err := flush(); err != nil {
		return err
	}
	s.mu.Lock()
	s.mem = mem
	s.mu.Unlock()
	return nil
}

// readBatches reads every stored entity's document and vector in key
// order, in batches sent to todo for a worker and to ordered for the load,
// until quit is closed or stopLoad is set.
func (s *Store) readBatches(quit <-chan struct{}, todo, ordered chan<- *loadBatch) (err error) {
	defer func() {
		// Tables were verified before Badger opened them; what is left to
		// panic on is data Badger itself wrote wrong.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading it panicked: %s", ErrDamaged, firstLine(fmt.Sprint(r)))
		}
	}()
	send := func(b *loadBatch) error {
		for _, ch := range []chan<- *loadBatch{todo, ordered} {
			select {
			case ch <- b:
			case <-quit:
				return errLoadStopped
			}
		}
		return nil
	}
	newBatch := func() *loadBatch { return &loadBatch{done: make(chan struct{})} }
	return s.db.Load().View(func(txn *badger.Txn) error {
		iopts := badger.DefaultIteratorOptions
		iopts.Prefix = []byte(prefixDoc)
		it := txn.NewIterator(iopts)
		defer it.Close()
		vopts := badger.DefaultIteratorOptions
		vopts.Prefix = []byte(prefixVector)
		vit := txn.NewIterator(vopts)
		defer vit.Close()
		vit.Rewind()
		var vkey []byte
		b := newBatch()
		for it.Rewind(); it.Valid(); it.Next() {
			if s.stopLoad.Load() {
				return errLoadStopped
			}
			item := it.Item()
			key := string(item.Key()[len(prefixDoc):])
			doc, err := item.ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("%w: read entity %q: %v", ErrDamaged, key, err)
			}
			// Vectors are keyed as documents are: the walk beside the
			// documents meets each one's vector in turn.
			var vec []float32
			vkey = append(append(vkey[:0], prefixVector...), key...)
			for vit.Valid() && bytes.Compare(vit.Item().Key(), vkey) < 0 {
				vit.Next()
			}
			if vit.Valid() && bytes.Equal(vit.Item().Key(), vkey) {
				if err := vit.Item().Value(func(v []byte) error { vec = decodeVector(v); return nil }); err != nil {
					return fmt.Errorf("%w: read the vector of %q: %v", ErrDamaged, key, err)
				}
				if len(vec) == 0 {
					// A value log cut short reads back empty.
					return fmt.Errorf("%w: the vector of %q reads back empty: its value is lost (a value log cut short or deleted?)", ErrDamaged, key)
				}
			}
			b.keys = append(b.keys, key)
			b.docs = append(b.docs, doc)
			b.vecs = append(b.vecs, vec)
			if len(b.keys) == loadBatchSize {
				if err := send(b); err != nil {
					return err
				}
				b = newBatch()
			}
		}
		if len(b.keys) > 0 {
			return send(b)
		}
		return nil
	})
}

// prepareBatch decodes b's documents and prepares their entities (and
// their payloads for the vector index, if pays), then marks b done.
func prepareBatch(b *loadBatch, pays bool) {
	defer close(b.done)
	defer func() {
		if r := recover(); r != nil {
			b.err = fmt.Errorf("%w: indexing it panicked: %s", ErrDamaged, firstLine(fmt.Sprint(r)))
		}
	}()
	b.ents = make([]*lkv1.Entity, len(b.docs))
	b.preps = make([]prepared, len(b.docs))
	if pays {
		b.pays = make([]vectorindex.Payload, len(b.docs))
	}
	for i, doc := range b.docs {
		e := &lkv1.Entity{}
		if err := proto.Unmarshal(doc, e); err != nil {
			b.err = fmt.Errorf("%w: read entity %q: %v", ErrDamaged, prefixDoc+b.keys[i], err)
			return
		}
		// A value log cut short or deleted reads back empty or wrong
		// values, which decode without error: an entity is what it is
		// stored under, or the store is damaged.
		if e.GetKey() != b.keys[i] || e.GetKind() == lkv1.Kind_KIND_UNSPECIFIED {
			b.err = fmt.Errorf("%w: entity %q reads back as %q (kind %s): its value is lost (a value log cut short or deleted?)",
				ErrDamaged, prefixDoc+b.keys[i], e.GetKey(), e.GetKind())
			return
		}
		b.docs[i] = nil
		b.ents[i] = e
		b.preps[i] = prepare(e)
		if pays && b.vecs[i] != nil {
			b.pays[i] = payloadOf(b.preps[i].fields)
		}
	}
}

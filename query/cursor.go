package query

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Page cursors. A cursor is opaque to clients: base64url over a small JSON
// object. It names the request it continues (a hash of the request without
// its cursor and limit), so a cursor replayed with other filters is refused
// instead of silently paging a different list.
//
// Two kinds, because two orders need different guarantees:
//   - name order (no ranking): the position of the last entity returned,
//     a pure function of that entity (badgerstore.OrderKey). The next page
//     starts strictly after it, so entities written meanwhile land before or
//     after the position and never shift the rest: no repeats, no skips, and
//     the cursor works on any query node with the same content.
//   - ranked order (semantic_query, search): scores depend on the whole
//     collection (BM25 statistics, rescaling), so new entities reorder the
//     list. The first page keeps its ranking as a snapshot on this node (the
//     candidates not ranked yet, by slot and generation); later pages rank it
//     as far as they need and read it by offset. Snapshots are kept for
//     snapshotTTL (at most maxSnapshots). A node that does not hold the
//     snapshot (another node behind a balancer, or after the TTL) ranks the
//     request again and keeps the list under the cursor's snapshot id, so
//     the walk goes on; the list is then as of that moment, and entities
//     written since the first page can shift it by a place or two.
type cursor struct {
	V     int    `json:"v"`
	Query string `json:"q"`
	// Name order: the last entity returned.
	Name    string `json:"n,omitempty"`
	DocRank int    `json:"r,omitempty"`
	Key     string `json:"k,omitempty"`
	// Ranked order: the snapshot and the offset of the next page in it.
	Snapshot string `json:"s,omitempty"`
	Offset   int    `json:"o,omitempty"`
	// Documents: the last document returned (source slug, key).
	Source string `json:"src,omitempty"`
}

const cursorVersion = 1

func (c *cursor) encode() string {
	c.V = cursorVersion
	b, _ := json.Marshal(c) // only strings and ints: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses s, checking it was made for the request whose hash
// is query. An empty s is no cursor (nil).
func decodeCursor(s, query string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxCursorLength {
		return nil, invalid("cursor", "too long to be a cursor this service made")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid("cursor", "not a cursor this service made; pass next_cursor unchanged")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.V != cursorVersion {
		return nil, invalid("cursor", "not a cursor this service made; pass next_cursor unchanged")
	}
	if c.Query != query {
		return nil, invalid("cursor", "was made for a different request; repeat the same arguments (only limit may change) or start again without a cursor")
	}
	// The request hash is no secret (anyone can compute it from the
	// request), so every field is checked for what this service makes,
	// whoever made the cursor.
	if !c.valid() {
		return nil, invalid("cursor", "not a cursor this service made; pass next_cursor unchanged")
	}
	return &c, nil
}

// Bounds of the fields of a cursor this service makes.
const (
	// maxCursorLength bounds what a cursor costs to decode. A name-order
	// cursor carries the last entity's name and key, which homebrew can
	// make long (Badger takes keys up to 65,000 bytes, names are values):
	// 4 KiB broke the walk past an entity with a 3,000-character key, which
	// the fuzzer found.
	maxCursorLength = 1 << 20
	// maxCursorOffset is far above any ranked list (one entry per stored
	// entity), and low enough that an offset plus a limit cannot overflow.
	maxCursorOffset = 1 << 30
	// maxCursorDocRank bounds badgerstore's document ranks (a handful),
	// whose difference the name order takes.
	maxCursorDocRank = 1 << 16
	// snapshotIDLength is the length of snapshots.put's ids: base64url of
	// 12 random bytes.
	snapshotIDLength = 16
)

// valid reports whether c is one kind of cursor with its fields in range:
// a snapshot id and an offset (ranked order), or a position (name order,
// documents).
func (c *cursor) valid() bool {
	if c.Snapshot != "" {
		b, err := base64.RawURLEncoding.DecodeString(c.Snapshot)
		return len(c.Snapshot) == snapshotIDLength && err == nil && len(b) == 12 &&
			c.Offset >= 0 && c.Offset <= maxCursorOffset &&
			c.Name == "" && c.DocRank == 0 && c.Key == "" && c.Source == ""
	}
	return c.Offset == 0 && c.DocRank >= 0 && c.DocRank <= maxCursorDocRank
}

// requestHash identifies a request for its cursors: the request with its
// cursor and limit cleared (a later page may ask for a different limit).
func requestHash(req proto.Message, strip func(proto.Message)) string {
	c := proto.Clone(req)
	strip(c)
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	h := fnv.New64a()
	_, _ = h.Write([]byte(req.ProtoReflect().Descriptor().FullName()))
	_, _ = h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// withCommon is a lookup request.
type withCommon interface {
	proto.Message
	GetCommon() *lkv1.Common
}

func lookupHash(req withCommon) string {
	return requestHash(req, func(m proto.Message) {
		if c := m.(withCommon).GetCommon(); c != nil {
			c.Cursor, c.Limit = "", 0
		}
	})
}

func (c *cursor) orderKey() badgerstore.OrderKey {
	return badgerstore.OrderKey{Name: c.Name, DocRank: c.DocRank, Key: c.Key}
}

// snapshot is a ranked result list as of its first page: per group (one
// for lookups, one per kind for search), the keys and scores in order.
type snapshot struct {
	groups   []*snapGroup
	ranking  lkv1.Ranking
	fallback string
	created  time.Time
	// arrays hold the groups' candidates not ranked yet: the first page's
	// scratch arrays, handed over rather than copied (a copy was most of
	// a semantic lookup's garbage at 46,000 entities, 40 bytes a
	// candidate). Once the snapshot is dropped and no page reads it
	// (refs), they go to the next first page (snapshots.spare).
	arrays  [][]scored
	refs    int  // pages reading the snapshot now; guarded by snapshots.mu
	dropped bool // out of the cache; guarded by snapshots.mu
}

// snapGroup is one ranked list: the results ranked so far, in order, and
// the candidates not ranked yet (later pages rank them as far as they
// need). Entities are kept by slot and its generation, which stay while
// the entity is stored, rewritten or not.
type snapGroup struct {
	kind  lkv1.Kind
	total int // results in the whole list

	mu     sync.Mutex
	order  []scored
	rest   *ranking // nil: all ranked
	dedupe bool
	taken  map[kindName]bool
}

// size is how many candidates the group keeps.
func (g *snapGroup) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.order)
	if g.rest != nil {
		n += len(g.rest.h)
	}
	return n
}

const (
	maxSnapshots = 256
	// maxSnapshotItems bounds the candidates all snapshots keep (about 32
	// bytes each): a semantic lookup's first page keeps every candidate of
	// its kind (20,000 creatures at 46,000 entities), and most walks never
	// ask for a second page. A later page of a dropped snapshot ranks again.
	maxSnapshotItems = 1 << 19
	snapshotTTL      = 15 * time.Minute
)

// maxSpare is how many dropped snapshots' arrays wait for a first page.
const maxSpare = 4

// snapshots keeps ranked snapshots by id, least recently used out first.
type snapshots struct {
	mu    sync.Mutex
	order *list.List // front: most recent; values are *snapEntry
	byID  map[string]*list.Element
	items int // candidates kept, over all snapshots
	now   func() time.Time
	spare [][]scored // dropped snapshots' arrays, for the next rankings
}

type snapEntry struct {
	id    string
	snap  *snapshot
	items int
}

// remove takes el out of the cache; c.mu is held.
func (c *snapshots) remove(el *list.Element) {
	e := el.Value.(*snapEntry)
	c.order.Remove(el)
	delete(c.byID, e.id)
	c.items -= e.items
}

// drop takes el out of the cache for good; c.mu is held. Its arrays are
// spare once no page reads it.
func (c *snapshots) drop(el *list.Element) {
	c.remove(el)
	s := el.Value.(*snapEntry).snap
	s.dropped = true
	if s.refs == 0 {
		c.recycle(s)
	}
}

// recycle keeps s's arrays for later rankings, as many as maxSpare (the
// largest); c.mu is held and nothing reads s any more.
func (c *snapshots) recycle(s *snapshot) {
	for _, a := range s.arrays {
		c.spare = append(c.spare, a[:0])
	}
	s.arrays = nil
	if len(c.spare) > maxSpare {
		slices.SortFunc(c.spare, func(a, b []scored) int { return cap(b) - cap(a) })
		clear(c.spare[maxSpare:])
		c.spare = c.spare[:maxSpare]
	}
}

// array returns a spare array with room for n candidates (the smallest
// that fits), or a new one.
func (c *snapshots) array(n int) []scored {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := -1
	for i, a := range c.spare {
		if cap(a) >= n && (best < 0 || cap(a) < cap(c.spare[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]scored, 0, n)
	}
	a := c.spare[best]
	c.spare = slices.Delete(c.spare, best, best+1)
	return a
}

// release says a page has done reading s (from resume).
func (c *snapshots) release(s *snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.refs--; s.refs == 0 && s.dropped {
		c.recycle(s)
	}
}

func newSnapshots() *snapshots {
	return &snapshots{order: list.New(), byID: map[string]*list.Element{}, now: time.Now}
}

func (c *snapshots) put(s *snapshot) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	c.putAs(id, s)
	return id
}

// putAs keeps s under id, replacing what id held.
func (c *snapshots) putAs(id string, s *snapshot) { c.keep(id, s, false) }

// keep is putAs; with read, a page reads s from now (release it after).
func (c *snapshots) keep(id string, s *snapshot, read bool) {
	s.created = c.now()
	n := 0
	for _, g := range s.groups {
		n += g.size()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		s.refs++
	}
	if el, ok := c.byID[id]; ok {
		if el.Value.(*snapEntry).snap == s {
			c.remove(el) // kept again under its own id
		} else {
			c.drop(el)
		}
	}
	s.dropped = false
	c.byID[id] = c.order.PushFront(&snapEntry{id: id, snap: s, items: n})
	c.items += n
	for c.order.Len() > maxSnapshots || c.items > maxSnapshotItems && c.order.Len() > 1 {
		c.drop(c.order.Back())
	}
}

// take removes and returns the snapshot kept under id, if any.
func (c *snapshots) take(id string) *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil
	}
	c.remove(el)
	return el.Value.(*snapEntry).snap
}

func (c *snapshots) get(id string) (*snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	s := el.Value.(*snapEntry).snap
	if c.now().Sub(s.created) > snapshotTTL {
		c.drop(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	s.refs++
	return s, true
}

// resume returns the ranked list cur continues: the snapshot kept under
// cur's snapshot id, else the list first ranks again (the request without
// its cursor, asking for one result), kept under that id from now on. A
// list with nothing past the first result is an empty snapshot. The
// caller releases it when its page is read.
func (c *snapshots) resume(ctx context.Context, cur *cursor, first func(context.Context) (nextCursor string, ranking lkv1.Ranking, fallback string, err error)) (*snapshot, error) {
	id := cur.Snapshot
	if s, ok := c.get(id); ok {
		return s, nil
	}
	next, ranking, fallback, err := first(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{ranking: ranking, fallback: fallback}
	if again, _ := decodeCursor(next, cur.Query); again != nil {
		if got := c.take(again.Snapshot); got != nil {
			s = got
		}
	}
	c.keep(id, s, true)
	return s, nil
}

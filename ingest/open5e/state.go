// The resync state in the state bucket: one record per endpoint (what it
// listed, by key and content hash) and the time of the last full run.

package open5e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// LastRunKey holds the finish time of the last resync (RFC 3339), which
// Run's schedule starts from.
const LastRunKey = "last-run"

// NormalizerKey holds the NormalizerVersion of the last full resync.
const NormalizerKey = "last-run-normalizer"

// NormalizerVersion is recorded with each full resync. Raise it when
// NormalizeRecord makes other entities of the same records (a text fix, a
// correction): a store resynced by an older normalizer is resynced at the
// next start, not at the next scheduled run a day later, and gets the
// changed entities alone (unchanged content hashes publish nothing).
// 2: typesetting hyphens made plain, the Net's damage dropped, legendary
// actions filed as actions or as their opening paragraph put right, the
// Monstrous Menagerie's contractions given back their apostrophes, HTML made
// markdown, run-on sentences and spaced commas mended, Black Flag's languages
// spaced.
// 3: spells given the classes their v1 records name (no SRD 5.1 spell was
// a paladin's; most of Deep Magic's lacked their classes) and subclasses;
// SRD 5.1's links ("srd:grappled") made words; permalinks mended.
// 4: the sections of a book v2 left out, from its v1 records (SRD 5.1's
// Rest: short and long rests), filed under the v2 book.
// 5: the parts of a v2 rule section v2 left out, from its v1 twin's text
// (SRD 5.1's Healing, Dropping to 0 Hit Points, Temporary Hit Points);
// headings' marks parted from their words ("### Archery").
// 6: a legendary action naming an action the source does not give ("The
// lich uses Paralyzing Touch.") keeps its structured attack.
// 7: magic armor whose text lifts its base armor's stealth disadvantage or
// strength requirement (Mithral Armor) without them.
// 8: creatures given the actions of their v1 records their v2 records lack
// (Tome of Beasts 3: 1,363).
// 9: markdown tables parted from the paragraphs run into them (Vault of
// Magic).
// 10: a letter's half-read escape code dropped ("væ00e6ttir", Tome of
// Beasts 2023's Vættir).
// 11: creatures' damage and condition lines kept as the book prints them,
// qualifiers and all ("from nonmagical attacks not made with silvered
// weapons"), the text winning over the key lists.
const NormalizerVersion = 11

// StatePrefix starts the state bucket key of every endpoint's resync state.
const StatePrefix = "sync."

// StateKey is the state bucket key of an endpoint: "sync.v2.spells".
func StateKey(ep Endpoint) string { return StatePrefix + ep.Version + "." + ep.Name }

// digest is the SHA-256 over the sorted (key, content hash) pairs.
func digest(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\n", k, m[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (r *run) loadState(ctx context.Context, ep Endpoint) (*lkv1.EndpointState, error) {
	st := &lkv1.EndpointState{Endpoint: ep.Path()}
	e, err := r.kv.Get(ctx, StateKey(ep))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", ep.Path(), err)
	}
	if err := proto.Unmarshal(e.Value(), st); err != nil {
		return nil, fmt.Errorf("decode state of %s: %w", ep.Path(), err)
	}
	return st, nil
}

func (r *run) saveState(ctx context.Context, ep Endpoint, st *lkv1.EndpointState) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode state of %s: %w", ep.Path(), err)
	}
	if _, err := r.kv.Put(ctx, StateKey(ep), b); err != nil {
		return fmt.Errorf("save state of %s: %w", ep.Path(), err)
	}
	return nil
}

// State returns the stored resync state of every endpoint the fetcher
// syncs, for status commands. Endpoints never synced have an empty state.
func (f *Fetcher) State(ctx context.Context) ([]*lkv1.EndpointState, error) {
	kv, err := f.js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("open state bucket %s: %w", ingest.StateBucket, err)
	}
	r := &run{f: f, kv: kv}
	var out []*lkv1.EndpointState
	for _, ep := range f.opts.Endpoints {
		st, err := r.loadState(ctx, ep)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

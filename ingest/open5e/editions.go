package open5e

import (
	"encoding/json"

	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Editions of the reference kinds. Open5e v2 serves conditions, skills,
// damage types, abilities and alignments from one "core" document (game
// system 5e-2014) whose records carry each book's text side by side in
// "descriptions": SRD 5.1's, SRD 5.2's and Level Up's (A5E), each naming its
// document and game system. Left as one entity, "Grappled" would answer a
// 2024 question with a card citing a 2014 compilation and opening on the
// A5E text. So each description becomes an entity of its own, in its own
// document ("open5e_v2:srd-2024:condition:grappled"), cited to that book
// and filtered by its game system like the rest of that book's content.

// splitEditions returns the entities of a v2 record: e itself when the
// record has no per-document descriptions, else one copy of e per
// description, each with that description's text, document and source
// record (the record with only that description). raw is the record.
func splitEditions(ep Endpoint, raw []byte, o obj, e *lkv1.Entity, cat *Catalog) []*lkv1.Entity {
	if ep.Version != "v2" || o.str("desc") != "" {
		return []*lkv1.Entity{e}
	}
	descs := o.objs("descriptions")
	var out []*lkv1.Entity
	seen := map[string]bool{}
	for _, d := range descs {
		docKey, text := d.str("document"), normalizeNewlines(d.str("desc"))
		if docKey == "" || text == "" || seen[docKey] {
			continue
		}
		seen[docKey] = true
		x := proto.Clone(e).(*lkv1.Entity)
		x.Document = editionDocument(ep, docKey, d.str("gamesystem"), cat)
		x.Description = text
		x.SourceRecord = recordWithDescription(raw, d)
		out = append(out, x)
	}
	if len(out) == 0 {
		return []*lkv1.Entity{e}
	}
	return out
}

// editionDocument is the catalog's document k, or one built from what the
// description says of it when the catalog does not know it.
func editionDocument(ep Endpoint, k, gameSystem string, cat *Catalog) *lkv1.Document {
	if d := cat.Document(ep.Source(), k); d != nil {
		return d
	}
	return &lkv1.Document{Key: k, Name: k, DisplayName: k, Source: ep.Source(), GameSystem: gameSystem}
}

// recordWithDescription is raw with "descriptions" narrowed to d, so that
// an edition's entity does not carry the other editions' texts in its
// source record.
func recordWithDescription(raw []byte, d obj) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return append([]byte(nil), raw...)
	}
	one, err := json.Marshal([]obj{d})
	if err != nil {
		return append([]byte(nil), raw...)
	}
	m["descriptions"] = one
	out, err := json.Marshal(m)
	if err != nil {
		return append([]byte(nil), raw...)
	}
	return out
}

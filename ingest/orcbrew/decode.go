// Package orcbrew imports OrcBrew homebrew (the EDN files OrcPub and
// Dungeon Master's Vault export) into LoreKeeper: Decode turns a file into
// entities, the Watcher imports the objects of the ORCBREW bucket as they
// come and go, and Put, PutFile, PutDir and MirrorDir fill the bucket.
//
// A file holds books: either a map from book name to content
// ({"Book" {:orcpub.dnd.e5/spells {...}}}), or one unwrapped export whose
// entities name their book in :option-pack. Each book becomes a Document
// of source orcbrew, keyed by its slug.
package orcbrew

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/edn"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// kindNS is the namespace of the content-kind keys in an export.
const kindNS = "orcpub.dnd.e5/"

// kinds maps the content keys of an export (without kindNS) to kinds.
var kinds = map[string]lkv1.Kind{
	"spells":      lkv1.Kind_KIND_SPELL,
	"monsters":    lkv1.Kind_KIND_CREATURE,
	"classes":     lkv1.Kind_KIND_CLASS,
	"subclasses":  lkv1.Kind_KIND_SUBCLASS,
	"races":       lkv1.Kind_KIND_RACE,
	"subraces":    lkv1.Kind_KIND_SUBRACE,
	"backgrounds": lkv1.Kind_KIND_BACKGROUND,
	"feats":       lkv1.Kind_KIND_FEAT,
	"languages":   lkv1.Kind_KIND_LANGUAGE,
	"invocations": lkv1.Kind_KIND_INVOCATION,
	"boons":       lkv1.Kind_KIND_BOON,
	"selections":  lkv1.Kind_KIND_SELECTION,
	"encounters":  lkv1.Kind_KIND_ENCOUNTER,
	"magic-items": lkv1.Kind_KIND_MAGIC_ITEM,
	"weapons":     lkv1.Kind_KIND_WEAPON,
	"armor":       lkv1.Kind_KIND_ARMOR,
}

// DecodeOptions tune Decode. A nil *DecodeOptions means all defaults.
type DecodeOptions struct {
	// Parse sets the parser's limits. Invalid UTF-8 is always repaired
	// (and reported), whatever Parse says: one bad byte in a description
	// should not cost a whole book.
	Parse *edn.Options
	// FetchedAt stamps the entities (default: now).
	FetchedAt time.Time
}

// File is what Decode found in one OrcBrew file.
type File struct {
	// Entities in key order.
	Entities []*lkv1.Entity
	// Books are the book names, sorted.
	Books []string
	// Counts is entities per kind slug.
	Counts map[string]uint64
	// Warnings say what was repaired or skipped. A file with warnings is a
	// partial import.
	Warnings []string
}

// DecoderVersion is recorded with each import. Raise it when Decode reads
// the same file into different entities: every file is then read again
// (2: a monster without XP gets the SRD's for its challenge rating; 3: a
// book whose key is an official document's gets its own, reservedKeys).
const DecoderVersion = 3

// Decode parses the OrcBrew file data, read from the bucket object named
// object, into entities. It fails only when the file as a whole cannot be
// read; unknown kinds and unusable entities become warnings.
func Decode(object string, data []byte, opts *DecodeOptions) (*File, error) {
	var o DecodeOptions
	if opts != nil {
		o = *opts
	}
	if o.FetchedAt.IsZero() {
		o.FetchedAt = time.Now()
	}
	po := edn.Options{}
	if o.Parse != nil {
		po = *o.Parse
	}
	po.RepairUTF8 = true
	res, err := edn.Parse(data, &po)
	if err != nil {
		return nil, err
	}
	d := &decoder{object: object, fetched: timestamppb.New(o.FetchedAt), books: map[string]*lkv1.Document{}, taken: map[string]bool{}}
	for _, w := range res.Warnings {
		d.warnf("%s", w)
	}
	top, ok := res.Value.(edn.Map)
	if !ok {
		return nil, fmt.Errorf("top-level value is %s, want a map of books or of content kinds", typeName(res.Value))
	}
	for _, k := range sortedKeys(top) {
		switch key := k.(type) {
		case string:
			book := strings.TrimSpace(key)
			content, ok := top[k].(edn.Map)
			switch {
			case book == "":
				d.warnf("skipped a book with a blank name")
			case !ok:
				d.warnf("book %q: skipped: content is %s, want a map of content kinds", book, typeName(top[k]))
			default:
				for _, kk := range sortedKeys(content) {
					d.kind(book, kk, content[kk])
				}
			}
		case edn.Keyword:
			// An unwrapped export: the entities name their book.
			d.kind("", k, top[k])
		default:
			if k == nil && top[k] == nil {
				continue // {nil nil}: inert cruft of real exports
			}
			d.warnf("skipped top-level key %s: want a book name or a content kind", clip(edn.String(k)))
		}
	}
	d.resolveParents()
	return d.file()
}

type decoder struct {
	object  string
	fetched *timestamppb.Timestamp
	books   map[string]*lkv1.Document // by document key
	taken   map[string]bool           // entity keys given out
	ents    []*lkv1.Entity
	// parents are subclasses and subraces to link once every class and
	// race is known; bySource finds those by book, kind and EDN key.
	parents  []parentRef
	bySource map[string]*lkv1.Entity
	warns    []string
}

type parentRef struct {
	e          *lkv1.Entity
	parentKind lkv1.Kind
	parentKey  string // the EDN key of the parent, e.g. "ranger"
}

func (d *decoder) warnf(format string, args ...any) {
	d.warns = append(d.warns, fmt.Sprintf(format, args...))
}

// kind imports one content-kind map. book is "" for an unwrapped export.
func (d *decoder) kind(book string, k, v any) {
	where := ""
	if book != "" {
		where = fmt.Sprintf("book %q: ", book)
	}
	kw, isKW := k.(edn.Keyword)
	name, inNS := strings.CutPrefix(string(kw), kindNS)
	kind, known := kinds[name]
	if !isKW || !inNS || !known {
		n := 0
		if m, ok := v.(edn.Map); ok {
			n = len(m)
		}
		d.warnf("%sskipped unknown content kind %s (%d entries)", where, clip(edn.String(k)), n)
		return
	}
	entries, ok := v.(edn.Map)
	if !ok {
		if v != nil {
			d.warnf("%sskipped %s: %s, want a map of entries", where, edn.String(k), typeName(v))
		}
		return
	}
	for _, ek := range sortedKeys(entries) {
		d.entity(book, kind, name, ek, entries[ek])
	}
}

// entity normalises one entry of a content-kind map.
func (d *decoder) entity(book string, kind lkv1.Kind, kindName string, k, v any) {
	sourceKey := edn.KeyString(k)
	label := fmt.Sprintf("%s %s", kindName, clip(edn.String(k)))
	if k == nil && v == nil {
		return
	}
	m, ok := v.(edn.Map)
	if !ok {
		d.warnf("%sskipped %s: %s, want a map", bookPrefix(book), label, typeName(v))
		return
	}
	r := rec{m: m, d: d}
	if book == "" {
		book = strings.TrimSpace(r.str("option-pack"))
		if book == "" {
			book = strings.TrimSuffix(path.Base(d.object), path.Ext(d.object))
		}
	}
	r.where = fmt.Sprintf("book %q: %s", book, label)
	name, why := entityName(m[edn.Keyword("name")])
	if why != "" {
		d.warnf("book %q: skipped %s: %s", book, label, why)
		return
	}
	doc := d.document(book)
	slug := d.slug(doc.GetKey(), kind, name, sourceKey)
	if slug == "" {
		d.warnf("book %q: skipped %s: no letters or digits in its name or key to make a slug from", book, label)
		return
	}
	record, err := edn.ToJSON(m)
	if err != nil {
		d.warnf("book %q: skipped %s: %v", book, label, err)
		return
	}
	e := &lkv1.Entity{
		Key:          entityKey(doc.GetKey(), kind, slug),
		Slug:         slug,
		Kind:         kind,
		Name:         name,
		Document:     doc,
		SourceKey:    sourceKey,
		SourceUrl:    d.object,
		Description:  strings.TrimSpace(r.str("description")),
		SourceRecord: record,
		FetchedAt:    d.fetched,
	}
	d.details(e, r)
	d.ents = append(d.ents, e)
	if d.bySource == nil {
		d.bySource = map[string]*lkv1.Entity{}
	}
	d.bySource[doc.GetKey()+"\x00"+kind.Slug()+"\x00"+sourceKey] = e
}

func bookPrefix(book string) string {
	if book == "" {
		return ""
	}
	return fmt.Sprintf("book %q: ", book)
}

// entityName returns the usable name in v, or why there is none.
func entityName(v any) (string, string) {
	switch x := v.(type) {
	case nil:
		return "", "no :name"
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return s, ""
		}
		return "", "blank :name"
	default:
		return "", fmt.Sprintf(":name is %s, want a string", typeName(v))
	}
}

func (d *decoder) document(book string) *lkv1.Document {
	key := lkv1.Slugify(book)
	if key == "" {
		sum := sha256.Sum256([]byte(book))
		key = "book-" + hex.EncodeToString(sum[:4])
	}
	if reservedKeys[key] {
		// documents=["srd-2014"] means the SRD 5.1; a homebrew book so
		// named would come with it.
		own := "homebrew-" + key
		if _, ok := d.books[own]; !ok {
			d.warnf("book %q: its key %q is an official document's: keyed %q instead", book, key, own)
		}
		key = own
	}
	if doc, ok := d.books[key]; ok {
		return doc
	}
	doc := &lkv1.Document{Key: key, Name: book, Source: lkv1.Source_SOURCE_ORCBREW}
	d.books[key] = doc
	return doc
}

// slug gives the entity a slug unique within its book and kind: the
// slugified name, else the slugified EDN key, else a numbered name.
func (d *decoder) slug(docKey string, kind lkv1.Kind, name, sourceKey string) string {
	cands := []string{lkv1.Slugify(name), lkv1.Slugify(sourceKey)}
	for _, c := range cands {
		if c != "" && !d.taken[entityKey(docKey, kind, c)] {
			d.taken[entityKey(docKey, kind, c)] = true
			return c
		}
	}
	base := cands[0]
	if base == "" {
		base = cands[1]
	}
	if base == "" {
		return ""
	}
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s-%d", base, i)
		if !d.taken[entityKey(docKey, kind, c)] {
			d.taken[entityKey(docKey, kind, c)] = true
			return c
		}
	}
}

// resolveParents links subclasses and subraces to a class or race of the
// same book. A parent from elsewhere (an SRD class) keeps only its name.
func (d *decoder) resolveParents() {
	for _, p := range d.parents {
		co := p.e.GetCharacterOption()
		parent := d.bySource[p.e.GetDocument().GetKey()+"\x00"+p.parentKind.Slug()+"\x00"+p.parentKey]
		if parent != nil {
			co.ParentKey = parent.GetKey()
			co.ParentName = parent.GetName()
		}
	}
}

func (d *decoder) file() (*File, error) {
	f := &File{Counts: map[string]uint64{}, Warnings: d.warns}
	sort.Slice(d.ents, func(i, j int) bool { return d.ents[i].GetKey() < d.ents[j].GetKey() })
	for _, e := range d.ents {
		h, err := ingest.ContentHash(e)
		if err != nil {
			return nil, err
		}
		e.ContentHash = h
		f.Counts[e.GetKind().Slug()]++
	}
	f.Entities = d.ents
	for _, doc := range d.books {
		f.Books = append(f.Books, doc.GetName())
	}
	sort.Strings(f.Books)
	return f, nil
}

// reservedKeys are the keys of the official documents (every document
// of Open5e's v2 and v1 APIs) and the aliases the documents filter reads
// as theirs: a homebrew book's key is never one of them.
var reservedKeys = map[string]bool{
	// v2
	"a5e-ag": true, "a5e-ddg": true, "a5e-gpg": true, "a5e-mm": true, "bfrd": true, "ccdx": true, "core": true,
	"deepm": true, "deepmx": true, "elderberry-inn-icons": true, "kp": true, "open5e": true, "open5e-2024": true,
	"spells-that-dont-suck": true, "srd-2014": true, "srd-2024": true, "tdcs": true, "tob": true, "tob-2023": true,
	"tob2": true, "tob3": true, "toh": true, "vom": true, "wz": true,
	// v1
	"a5e": true, "blackflag": true, "cc": true, "dmag": true, "dmag-e": true, "menagerie": true, "o5e": true,
	"taldorei": true, "warlock": true, "wotc-srd": true,
	// aliases (the spec's decided ones that are slugs)
	"srd": true, "srd-5e": true,
}

// entityKey is the key of an OrcBrew entity:
// orcbrew:<book-slug>:<kind-slug>:<slug>.
func entityKey(bookKey string, kind lkv1.Kind, slug string) string {
	return lkv1.EntityKey(lkv1.Source_SOURCE_ORCBREW, bookKey, kind, slug)
}

func sortedKeys(m edn.Map) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return edn.String(keys[i]) < edn.String(keys[j]) })
	return keys
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return "a string"
	case edn.Keyword:
		return "a keyword"
	case int64, float64:
		return fmt.Sprintf("a number (%s)", edn.String(x))
	case bool:
		return "a boolean"
	case edn.Vector:
		return "a vector"
	case edn.Set:
		return "a set"
	case edn.Map:
		return "a map"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// clip shortens text quoted from the input in a warning.
func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

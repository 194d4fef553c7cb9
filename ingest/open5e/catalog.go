package open5e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest/srddb"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// SRDAttribution is the attribution the SRD's CC-BY-4.0 licence requires.
const SRDAttribution = `This work includes material taken from the System Reference Document 5.1 ("SRD 5.1") and the System Reference Document 5.2 ("SRD 5.2") by Wizards of the Coast LLC, available at https://dnd.wizards.com/resources/systems-reference-document, licensed under the Creative Commons Attribution 4.0 International License (https://creativecommons.org/licenses/by/4.0/legalcode).`

// licenseNames are the short licence names entities carry, by Open5e key.
var licenseNames = map[string]string{
	"cc-by-40": "CC-BY-4.0",
	"ogl-10a":  "OGL 1.0a",
	"cc0":      "CC0-1.0",
}

// Catalog holds the document metadata of both API versions and the titles
// of v2 rulesets. The zero value is empty and usable: unknown documents get
// what the record itself says.
type Catalog struct {
	docs     map[string]*lkv1.Document // "<source slug>:<key>"
	rulesets map[string]string         // ruleset key -> title
	// twins maps a v1 document to the v2 documents that carry the same
	// book (see V2Twins).
	twins map[string][]string
	// spells are SRD 5.1's spell names, lower-case (srddb), read at the
	// first text that needs them (spellLists).
	spells     map[string]bool
	spellsOnce sync.Once
	// environments are every environment Open5e lists (v2/environments),
	// as creature environment keys.
	environments map[string]bool
}

// spellNames are SRD 5.1's spell names, lower-case, from its second
// transcription; none if it cannot be read (a nil catalog too).
func (c *Catalog) spellNames() map[string]bool {
	if c == nil {
		return nil
	}
	c.spellsOnce.Do(func() {
		db, err := srddb.Load()
		if err != nil {
			return
		}
		c.spells = map[string]bool{}
		for _, s := range db.Spells {
			c.spells[strings.ToLower(s.Name)] = true
		}
	})
	return c.spells
}

// NewCatalog builds the catalog from the records of /v2/documents,
// /v2/publishers, /v2/licenses, /v2/gamesystems and /v1/documents.
func NewCatalog(v2Docs, publishers, licenses, gameSystems, v1Docs []json.RawMessage) (*Catalog, error) {
	c := &Catalog{docs: map[string]*lkv1.Document{}, rulesets: map[string]string{}, twins: map[string][]string{}}
	names := func(recs []json.RawMessage, what string) (map[string]string, error) {
		m := map[string]string{}
		for _, r := range recs {
			var v struct{ Key, Name string }
			if err := json.Unmarshal(r, &v); err != nil {
				return nil, fmt.Errorf("read %s record: %w", what, err)
			}
			m[v.Key] = v.Name
		}
		return m, nil
	}
	pubs, err := names(publishers, "publisher")
	if err != nil {
		return nil, err
	}
	if _, err := names(licenses, "license"); err != nil {
		return nil, err
	}
	systems, err := names(gameSystems, "game system")
	if err != nil {
		return nil, err
	}
	var v2 []v2Document
	for _, r := range v2Docs {
		var v v2Document
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("read v2 document record: %w", err)
		}
		v2 = append(v2, v)
	}
	// v1 documents carry the OGL section 15 text; v2 documents do not, so
	// v2 borrows it from its v1 twin where it has one. Where the twin's
	// record names a licence the v2 record does not, both are noted.
	copyright := map[string]string{}
	noteOf := map[string]string{}
	for _, r := range v1Docs {
		var v struct {
			Slug, Title, URL, License, Organization, Copyright string
			V2RelatedKey                                       string `json:"v2_related_key"`
		}
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("read v1 document record: %w", err)
		}
		// A v1 document is of its v2 twin's game system (Level Up's
		// Monstrous Menagerie is a5e); one with no twin is 5e 2014, the
		// only system v1 knew.
		gs, note, twinKey := "5e-2014", "", ""
		lic := v1LicenseName(v.License)
		if twin := v2Twin(v.V2RelatedKey, v2); twin != nil {
			gs, twinKey = twin.Gamesystem.Key, twin.Key
			c.twins[v.Slug] = sameBook(twin, v2)
			copyright[twin.Key] = v.Copyright
			if names := twin.licenseNames(); lic != "" && !slices.Contains(names, lic) {
				note = fmt.Sprintf("v2 record (%s): %s; v1 record (%s): %s", twin.Key, strings.Join(names, ", "), v.Slug, lic)
				noteOf[twin.Key] = note
			}
		}
		c.docs[key(lkv1.Source_SOURCE_OPEN5E_V1, v.Slug)] = &lkv1.Document{
			Key: v.Slug, Name: v.Title, DisplayName: v.Title,
			Source: lkv1.Source_SOURCE_OPEN5E_V1, Publisher: v.Organization,
			PublisherKey: lkv1.Slugify(v.Organization), Licenses: nonEmpty(lic),
			GameSystem: gs, GameSystemName: systems[gs], Permalink: permalink(v.URL),
			Attribution: v.Copyright, LicenseNote: note, Twin: twinKey,
		}
	}
	for _, v := range v2 {
		d := &lkv1.Document{
			Key: v.Key, Name: v.Name, DisplayName: v.DisplayName,
			Source: lkv1.Source_SOURCE_OPEN5E_V2, Publisher: v.Publisher.Name,
			PublisherKey: v.Publisher.Key, GameSystem: v.Gamesystem.Key,
			GameSystemName: v.Gamesystem.Name, Permalink: permalink(v.Permalink),
			Licenses: v.licenseNames(), LicenseNote: noteOf[v.Key],
		}
		if d.Publisher == "" {
			d.Publisher = pubs[v.Publisher.Key]
		}
		if d.GameSystemName == "" {
			d.GameSystemName = systems[v.Gamesystem.Key]
		}
		// The SRD's CC-BY-4.0 attribution, and for SRD 5.1, also under
		// the OGL, its section 15 notice after it.
		if v.Key == "srd-2014" || v.Key == "srd-2024" || v.Key == "core" {
			d.Attribution = SRDAttribution
		}
		if cr := copyright[v.Key]; cr != "" {
			d.Attribution = strings.TrimSpace(d.Attribution + "\n\n" + cr)
		}
		c.docs[key(lkv1.Source_SOURCE_OPEN5E_V2, v.Key)] = d
	}
	// The v1 SRD's record names its attribution only in its OGL notice.
	if d := c.docs[key(lkv1.Source_SOURCE_OPEN5E_V1, "wotc-srd")]; d != nil && d.Attribution == "" {
		d.Attribution = SRDAttribution
	}
	return c, nil
}

// v2Document is what the catalog reads of a /v2/documents record.
type v2Document struct {
	Key, Name, Permalink, Type string
	DisplayName                string `json:"display_name"`
	PublicationDate            string `json:"publication_date"`
	Licenses                   []struct{ Key, Name string }
	Publisher                  struct{ Key, Name string }
	Gamesystem                 struct{ Key, Name string }
}

// licenseNames are the short names of the document's licences.
func (d *v2Document) licenseNames() []string {
	var out []string
	for _, l := range d.Licenses {
		if n, ok := licenseNames[l.Key]; ok {
			out = append(out, n)
		} else {
			out = append(out, l.Name)
		}
	}
	return out
}

// v2Twin returns the v2 document that a v1 document's v2_related_key
// names, or nil when there is none.
//
// Two v1 records name a key that v2 split: "srd" (v2 has srd-2014 and
// srd-2024) and "a5e" (a5e-ag, a5e-ddg, a5e-gpg, a5e-mm). A related key
// that names no v2 document resolves to the earliest-published v2 document
// whose key extends it with "-": v2 split the v1 book into the book itself
// and later ones (the next SRD, Level Up's later books) under its name, and
// the book itself came first.
func v2Twin(related string, v2 []v2Document) *v2Document {
	if related == "" {
		return nil
	}
	var best *v2Document
	for i, d := range v2 {
		if d.Key == related {
			return &v2[i]
		}
		if strings.HasPrefix(d.Key, related+"-") && (best == nil || d.PublicationDate < best.PublicationDate) {
			best = &v2[i]
		}
	}
	return best
}

// sameBook is the twin and the MISC documents of its game system: v2 moved
// the SRD's reference content (conditions, skills, damage types, ...) into
// "core", a MISC document of "the core concepts of 5e for all gamesystems
// and documents", so a v1 kind that v2 serves from core is a duplicate too.
func sameBook(twin *v2Document, v2 []v2Document) []string {
	out := []string{twin.Key}
	for _, d := range v2 {
		if d.Key != twin.Key && d.Type == "MISC" && d.Gamesystem.Key == twin.Gamesystem.Key {
			out = append(out, d.Key)
		}
	}
	return out
}

// v1LicenseName shortens a v1 document record's licence to the names v2
// licences get (licenseNames).
func v1LicenseName(l string) string {
	switch {
	case strings.EqualFold(l, "Open Gaming License") || strings.EqualFold(l, "OGL"):
		return "OGL 1.0a"
	case strings.HasPrefix(l, "Creative Commons Attribution 4.0"):
		return "CC-BY-4.0"
	}
	return l
}

// V2Twins returns the v2 documents that carry the same book as v1 document
// k: the one its record's v2_related_key names (see v2Twin) and the MISC
// documents of that one's game system (core). It is nil when v2 has no
// twin of k.
func (c *Catalog) V2Twins(k string) []string {
	if c == nil {
		return nil
	}
	return c.twins[k]
}

func key(s lkv1.Source, k string) string { return s.Slug() + ":" + k }

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Document returns a copy of the metadata of document k of source s, or
// nil when the catalog does not know it.
func (c *Catalog) Document(s lkv1.Source, k string) *lkv1.Document {
	if c == nil {
		return nil
	}
	if d, ok := c.docs[key(s, k)]; ok {
		return proto.Clone(d).(*lkv1.Document)
	}
	return nil
}

// Documents returns every document the catalog knows, sorted by source and key.
func (c *Catalog) Documents() []*lkv1.Document {
	if c == nil {
		return nil
	}
	keys := make([]string, 0, len(c.docs))
	for k := range c.docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*lkv1.Document, 0, len(keys))
	for _, k := range keys {
		out = append(out, proto.Clone(c.docs[k]).(*lkv1.Document))
	}
	return out
}

// LearnRulesets records the titles of v2 rulesets, which rules name only by
// key.
func (c *Catalog) LearnRulesets(records []json.RawMessage) {
	if c.rulesets == nil {
		c.rulesets = map[string]string{}
	}
	for _, r := range records {
		var v struct{ Key, Name string }
		if json.Unmarshal(r, &v) == nil && v.Key != "" {
			c.rulesets[v.Key] = v.Name
		}
	}
}

// LearnEnvironments teaches c the environments Open5e lists, from the
// records of /v2/environments.
func (c *Catalog) LearnEnvironments(records []json.RawMessage) {
	c.environments = map[string]bool{}
	for _, r := range records {
		var v struct{ Name string }
		if json.Unmarshal(r, &v) == nil && lkv1.Slugify(v.Name) != "" {
			c.environments[lkv1.Slugify(v.Name)] = true
		}
	}
}

// everywhere reports whether envs are every environment Open5e lists: a
// record's stand-in for unknown (a Giant Ant of Tome of Beasts, or SRD
// 5.1's Clay Golem, in Hell, Elysium and the Plane of Fire alike), which
// says nothing of where the creature lives.
func (c *Catalog) everywhere(envs []string) bool {
	if c == nil || len(c.environments) < 2 || len(envs) < len(c.environments) {
		return false
	}
	for k := range c.environments {
		if !slices.Contains(envs, k) {
			return false
		}
	}
	return true
}

func (c *Catalog) rulesetName(k string) string {
	if c == nil {
		return ""
	}
	return c.rulesets[k]
}

// permalink is a document's address with its scheme written once (the
// Tal'Dorei v1 record's is "https://https://greenronin.com/...") and at
// all (Open5e Originals' v1 record's is "open5e.com").
func permalink(u string) string {
	u = strings.TrimSpace(u)
	for _, twice := range []string{"https://https://", "http://https://", "https://http://", "http://http://"} {
		if rest, ok := strings.CutPrefix(u, twice); ok {
			return twice[:strings.Index(twice, "//")+2] + rest
		}
	}
	if u != "" && !strings.Contains(u, "://") && strings.Contains(u, ".") && !strings.ContainsAny(u, " \t") {
		return "https://" + u
	}
	return u
}

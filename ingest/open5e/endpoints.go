// Package open5e reads the Open5e API: it pages through its endpoints with
// retries and bounds (Client), keeps the document metadata (Catalog) and
// normalises every record into the proto Entity (NormalizeEndpoint), and
// resyncs the whole catalogue into the ENTITIES stream on a schedule
// (Fetcher).
package open5e

import (
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// CanonicalOrigin is the public API's scheme and host. Source URLs always
// point there, whatever mirror the records were fetched from, so that they
// cite the public API and do not change the content hash.
const CanonicalOrigin = "https://api.open5e.com"

// Endpoint is one list endpoint of the API.
type Endpoint struct {
	// Version is "v1" or "v2".
	Version string
	// Name is the path segment: "spells", "magicitems".
	Name string
	// Kind is what its records become. Some endpoints hold two kinds
	// (classes with subclasses, species with subspecies); Kind is the main one.
	Kind lkv1.Kind
}

// Path is the endpoint's path: "/v2/spells/".
func (e Endpoint) Path() string { return "/" + e.Version + "/" + e.Name + "/" }

// Source is the entity source of the endpoint's version.
func (e Endpoint) Source() lkv1.Source {
	switch e.Version {
	case "v1":
		return lkv1.Source_SOURCE_OPEN5E_V1
	case textVersion:
		return lkv1.Source_SOURCE_SRD_TEXT
	}
	return lkv1.Source_SOURCE_OPEN5E_V2
}

// String is the path, for logs.
func (e Endpoint) String() string { return e.Path() }

// V2Endpoints are the v2 content endpoints, in fetch order: rulesets come
// before rules because a rule names its ruleset's title from the catalog.
var V2Endpoints = []Endpoint{
	{"v2", "spells", lkv1.Kind_KIND_SPELL},
	{"v2", "creatures", lkv1.Kind_KIND_CREATURE},
	{"v2", "weapons", lkv1.Kind_KIND_WEAPON},
	{"v2", "armor", lkv1.Kind_KIND_ARMOR},
	{"v2", "magicitems", lkv1.Kind_KIND_MAGIC_ITEM},
	{"v2", "items", lkv1.Kind_KIND_ITEM},
	{"v2", "classes", lkv1.Kind_KIND_CLASS},
	{"v2", "species", lkv1.Kind_KIND_RACE},
	{"v2", "backgrounds", lkv1.Kind_KIND_BACKGROUND},
	{"v2", "feats", lkv1.Kind_KIND_FEAT},
	{"v2", "rulesets", lkv1.Kind_KIND_RULE_SECTION},
	{"v2", "rules", lkv1.Kind_KIND_RULE},
	{"v2", "conditions", lkv1.Kind_KIND_CONDITION},
	{"v2", "damagetypes", lkv1.Kind_KIND_DAMAGE_TYPE},
	{"v2", "weaponproperties", lkv1.Kind_KIND_WEAPON_PROPERTY},
	{"v2", "skills", lkv1.Kind_KIND_SKILL},
	{"v2", "abilities", lkv1.Kind_KIND_ABILITY_SCORE},
	{"v2", "spellschools", lkv1.Kind_KIND_MAGIC_SCHOOL},
	{"v2", "languages", lkv1.Kind_KIND_LANGUAGE},
	{"v2", "alignments", lkv1.Kind_KIND_ALIGNMENT},
}

// V1Endpoints are the v1 endpoints with a kind. Only their records whose
// (kind, document) pair v2 lacks are kept (see V1Fill). v1 planes and
// spelllist carry no kind LoreKeeper serves.
var V1Endpoints = []Endpoint{
	{"v1", "spells", lkv1.Kind_KIND_SPELL},
	{"v1", "monsters", lkv1.Kind_KIND_CREATURE},
	{"v1", "weapons", lkv1.Kind_KIND_WEAPON},
	{"v1", "armor", lkv1.Kind_KIND_ARMOR},
	{"v1", "magicitems", lkv1.Kind_KIND_MAGIC_ITEM},
	{"v1", "classes", lkv1.Kind_KIND_CLASS},
	{"v1", "races", lkv1.Kind_KIND_RACE},
	{"v1", "backgrounds", lkv1.Kind_KIND_BACKGROUND},
	{"v1", "feats", lkv1.Kind_KIND_FEAT},
	{"v1", "sections", lkv1.Kind_KIND_RULE_SECTION},
	{"v1", "conditions", lkv1.Kind_KIND_CONDITION},
}

// textVersion is TextEndpoint's Version.
const textVersion = "text"

// TextEndpoint is the resync's step for a book's own text (Options.Text):
// not an Open5e endpoint, but synced like one, after them all, with its
// state under its own key ("sync.text.srd-2024").
var TextEndpoint = Endpoint{textVersion, srd52.DocumentKey, lkv1.Kind_KIND_RULE}

// Endpoints is every content endpoint: v2 first, then v1.
func Endpoints() []Endpoint {
	return append(append([]Endpoint(nil), V2Endpoints...), V1Endpoints...)
}

// MetadataEndpoints are read into the Catalog before any content: the
// documents' (NewCatalog's arguments, in order), then the environments
// (LearnEnvironments).
var MetadataEndpoints = []Endpoint{
	{Version: "v2", Name: "documents"},
	{Version: "v2", Name: "publishers"},
	{Version: "v2", Name: "licenses"},
	{Version: "v2", Name: "gamesystems"},
	{Version: "v1", Name: "documents"},
	{Version: "v2", Name: "environments"},
}

// KindDoc is a (kind, document key) pair.
type KindDoc struct {
	Kind     lkv1.Kind
	Document string
}

// Coverage is what v2 serves: the (kind, v2 document) pairs, and the
// slugs of each v2 document's rules and rule sections.
type Coverage struct {
	pairs map[KindDoc]bool
	rules map[string]bool // "<document>/<slug>"
}

func newCoverage() Coverage {
	return Coverage{pairs: map[KindDoc]bool{}, rules: map[string]bool{}}
}

// add records a v2 entity of kind, from document doc, with slug.
func (c Coverage) add(kind lkv1.Kind, doc, slug string) {
	c.pairs[KindDoc{kind, doc}] = true
	if kind == lkv1.Kind_KIND_RULE || kind == lkv1.Kind_KIND_RULE_SECTION {
		c.rules[doc+"/"+slug] = true
	}
}

// CoverageOf returns what v2 entities cover.
func CoverageOf(v2 []*lkv1.Entity) Coverage {
	c := newCoverage()
	for _, e := range v2 {
		if e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V2 {
			c.add(e.GetKind(), e.GetDocument().GetKey(), e.GetSlug())
		}
	}
	return c
}

// V1Fill reports whether v1 entity e fills a gap: v2 has no entity of its
// kind from the same book (cat.V2Twins), or e is a rule section the v2
// book carries under no rule or section of that name (SRD 5.1's Rest, its
// short and long rests, is one v2 left out). In the second case into is
// that v2 book, which e belongs to: a section of it, not of a second copy.
func (c Coverage) V1Fill(cat *Catalog, e *lkv1.Entity) (fill bool, into string) {
	for _, v2doc := range cat.V2Twins(e.GetDocument().GetKey()) {
		if !c.pairs[KindDoc{e.GetKind(), v2doc}] {
			continue
		}
		if e.GetKind() != lkv1.Kind_KIND_RULE_SECTION || c.rules[v2doc+"/"+lkv1.Slugify(e.GetName())] {
			return false, ""
		}
		into = v2doc
	}
	return true, into
}

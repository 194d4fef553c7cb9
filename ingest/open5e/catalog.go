package open5e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

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
}

// NewCatalog builds the catalog from the records of /v2/documents,
// /v2/publishers, /v2/licenses, /v2/gamesystems and /v1/documents.
func NewCatalog(v2Docs, publishers, licenses, gameSystems, v1Docs []json.RawMessage) (*Catalog, error) {
	c := &Catalog{docs: map[string]*lkv1.Document{}, rulesets: map[string]string{}}
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
	// v1 documents carry the OGL section 15 text; v2 documents do not, so
	// v2 borrows it through v1's v2_related_key where one exists.
	copyright := map[string]string{}
	for _, r := range v1Docs {
		var v struct {
			Slug, Title, URL, License, Organization, Copyright string
			V2RelatedKey                                       string `json:"v2_related_key"`
		}
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("read v1 document record: %w", err)
		}
		gs, gsName := "5e-2014", systems["5e-2014"]
		if v.Slug == "a5e" {
			gs, gsName = "a5e", systems["a5e"]
		}
		lic := v.License
		if strings.EqualFold(lic, "Open Gaming License") || strings.EqualFold(lic, "OGL") {
			lic = "OGL 1.0a"
		}
		c.docs[key(lkv1.Source_SOURCE_OPEN5E_V1, v.Slug)] = &lkv1.Document{
			Key: v.Slug, Name: v.Title, DisplayName: v.Title,
			Source: lkv1.Source_SOURCE_OPEN5E_V1, Publisher: v.Organization,
			PublisherKey: lkv1.Slugify(v.Organization), Licenses: nonEmpty(lic),
			GameSystem: gs, GameSystemName: gsName, Permalink: v.URL,
			Attribution: v.Copyright,
		}
		if v.V2RelatedKey != "" {
			copyright[v.V2RelatedKey] = v.Copyright
		}
	}
	for _, r := range v2Docs {
		var v struct {
			Key, Name, Permalink string
			DisplayName          string `json:"display_name"`
			Licenses             []struct{ Key, Name string }
			Publisher            struct{ Key, Name string }
			Gamesystem           struct{ Key, Name string }
		}
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("read v2 document record: %w", err)
		}
		d := &lkv1.Document{
			Key: v.Key, Name: v.Name, DisplayName: v.DisplayName,
			Source: lkv1.Source_SOURCE_OPEN5E_V2, Publisher: v.Publisher.Name,
			PublisherKey: v.Publisher.Key, GameSystem: v.Gamesystem.Key,
			GameSystemName: v.Gamesystem.Name, Permalink: v.Permalink,
		}
		if d.Publisher == "" {
			d.Publisher = pubs[v.Publisher.Key]
		}
		if d.GameSystemName == "" {
			d.GameSystemName = systems[v.Gamesystem.Key]
		}
		for _, l := range v.Licenses {
			if n, ok := licenseNames[l.Key]; ok {
				d.Licenses = append(d.Licenses, n)
			} else {
				d.Licenses = append(d.Licenses, l.Name)
			}
		}
		switch {
		case v.Key == "srd-2014" || v.Key == "srd-2024" || v.Key == "core":
			d.Attribution = SRDAttribution
		case copyright[v.Key] != "":
			d.Attribution = copyright[v.Key]
		}
		c.docs[key(lkv1.Source_SOURCE_OPEN5E_V2, v.Key)] = d
	}
	// The stale v1 key for the SRD ("srd") still names its attribution.
	if d := c.docs[key(lkv1.Source_SOURCE_OPEN5E_V1, "wotc-srd")]; d != nil && d.Attribution == "" {
		d.Attribution = SRDAttribution
	}
	return c, nil
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

func (c *Catalog) rulesetName(k string) string {
	if c == nil {
		return ""
	}
	return c.rulesets[k]
}

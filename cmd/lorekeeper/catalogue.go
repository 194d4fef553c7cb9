package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"lorekeeper.dev/embedder/vectorbundle"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// bundledCatalogue is what a load of the bundled content will have stored
// once it is done, known before it starts (the list make vectors records
// with the bundled vectors): how many entities, and which documents hold
// each name, so that an answer given while the load goes on can say which
// copies of a name are still to come.
type bundledCatalogue struct {
	total int
	// docs holds, by kind and lower-cased name, the documents whose copy
	// the load brings.
	docs map[string][]string
	// documents are the keys of the documents the load brings.
	documents map[string]bool
}

func catalogueKey(kind lkv1.Kind, name string) string {
	return kind.Slug() + "\x00" + strings.ToLower(strings.TrimSpace(name))
}

// bundledCatalogue is what the load brings when it is the bundled
// content's (the snapshot, every endpoint), nil otherwise or when the list
// cannot be read.
func (i *ingestFlags) bundledCatalogue(log *slog.Logger) *bundledCatalogue {
	if i.open5eURL != "snapshot" && i.open5eURL != "" || i.endpoints != "" {
		return nil
	}
	c, err := readBundledCatalogue()
	if err != nil {
		log.Warn("progress and answers during a load will not say what is still to come", "err", err)
		return nil
	}
	return c
}

// readBundledCatalogue reads the bundled content's list of entities.
func readBundledCatalogue() (*bundledCatalogue, error) {
	b, err := vectorbundle.BundledContents()
	if err != nil {
		return nil, fmt.Errorf("the bundled content's list of entities: %w", err)
	}
	return newBundledCatalogue(b.Contents), nil
}

func newBundledCatalogue(entries []vectorbundle.Entry) *bundledCatalogue {
	c := &bundledCatalogue{total: len(entries), docs: map[string][]string{}, documents: map[string]bool{}}
	for _, e := range entries {
		p, ok := lkv1.ParseEntityKey(e.Key)
		if !ok {
			continue
		}
		c.documents[p.Document] = true
		k := catalogueKey(p.Kind, e.Name)
		if !slices.Contains(c.docs[k], p.Document) {
			c.docs[k] = append(c.docs[k], p.Document)
		}
	}
	return c
}

// missing returns the documents whose copy of the result's name the load
// still brings (none stored yet: not the result's nor an alternate's),
// among those the request lets through (documents nil: all).
func (c *bundledCatalogue) missing(r *lkv1.Result, documents []string) []string {
	e := r.GetEntity()
	have := []string{e.GetDocument().GetKey()}
	for _, a := range r.GetAlternates() {
		have = append(have, a.GetDocumentKey())
	}
	return c.notIn(catalogueKey(e.GetKind(), e.GetName()), have, documents)
}

// coming returns, for a name no stored entity of kinds bears, the
// documents whose copy of it the load brings.
func (c *bundledCatalogue) coming(name string, kinds []lkv1.Kind, documents []string) []string {
	var out []string
	for _, k := range kinds {
		for _, d := range c.notIn(catalogueKey(k, name), nil, documents) {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

func (c *bundledCatalogue) notIn(key string, have, documents []string) []string {
	var out []string
	for _, d := range c.docs[key] {
		if !slices.Contains(have, d) && (documents == nil || slices.Contains(documents, d)) {
			out = append(out, d)
		}
	}
	return out
}

// methodKinds are the kinds each lookup answers with.
var methodKinds = map[string][]lkv1.Kind{
	lkv1.QueryService_LookupSpells_FullMethodName:    {lkv1.Kind_KIND_SPELL},
	lkv1.QueryService_LookupCreatures_FullMethodName: {lkv1.Kind_KIND_CREATURE},
	lkv1.QueryService_LookupEquipment_FullMethodName: {lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_ITEM},
	lkv1.QueryService_LookupCharacterOptions_FullMethodName: {lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_SUBCLASS, lkv1.Kind_KIND_RACE,
		lkv1.Kind_KIND_SUBRACE, lkv1.Kind_KIND_BACKGROUND, lkv1.Kind_KIND_FEAT},
	lkv1.QueryService_LookupRules_FullMethodName: {lkv1.Kind_KIND_RULE, lkv1.Kind_KIND_RULE_SECTION, lkv1.Kind_KIND_CONDITION,
		lkv1.Kind_KIND_DAMAGE_TYPE, lkv1.Kind_KIND_WEAPON_PROPERTY, lkv1.Kind_KIND_SKILL, lkv1.Kind_KIND_ABILITY_SCORE,
		lkv1.Kind_KIND_MAGIC_SCHOOL, lkv1.Kind_KIND_LANGUAGE, lkv1.Kind_KIND_PROFICIENCY, lkv1.Kind_KIND_ALIGNMENT},
}

// stillComing is the warnings a lookup answered during the load gets for
// the copies of its names the load has not stored yet: for each result
// whose name other documents also hold, and for a name asked for that
// nothing stored bears yet.
func (c *bundledCatalogue) stillComing(method string, req any, resp *lkv1.LookupResponse) []string {
	var documents []string
	name := ""
	if r, ok := req.(interface{ GetCommon() *lkv1.Common }); ok {
		name = r.GetCommon().GetName()
		if d := r.GetCommon().GetDocuments(); d != nil {
			documents = []string{}
			for _, k := range d.GetDocuments() {
				k = strings.ToLower(k)
				if !c.documents[k] {
					// A name or an alias: which books it lets through is
					// the query service's to say; say nothing rather than
					// name a book the filter leaves out.
					return nil
				}
				documents = append(documents, k)
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range resp.GetResults() {
		k := catalogueKey(r.GetEntity().GetKind(), r.GetEntity().GetName())
		if seen[k] {
			continue
		}
		seen[k] = true
		if docs := c.missing(r, documents); len(docs) > 0 {
			out = append(out, fmt.Sprintf("More copies of %s are still loading (from %s): ask again in a few seconds to see every book's.",
				r.GetEntity().GetName(), strings.Join(docs, ", ")))
		}
	}
	if len(resp.GetResults()) == 0 && name != "" && !strings.ContainsAny(name, "*%") {
		if docs := c.coming(name, methodKinds[method], documents); len(docs) > 0 {
			out = append(out, fmt.Sprintf("%s is not stored yet: it is still loading (from %s). Ask again in a few seconds.",
				name, strings.Join(docs, ", ")))
		}
	}
	return out
}

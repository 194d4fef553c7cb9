package main

import (
	"strings"
	"testing"

	"lorekeeper.dev/embedder/vectorbundle"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestBundledCatalogue_stillComing: an answer given during the load says,
// for each name, which books' copies are still to come (not the result's,
// not its alternates', not those the request's documents leave out), and
// for a name nothing stored bears yet, that it is coming; names no book
// of the load holds, kinds the lookup does not answer with, and document
// filters it cannot read get nothing.
func TestBundledCatalogue_stillComing(t *testing.T) {
	cat := newBundledCatalogue([]vectorbundle.Entry{
		{Key: "open5e_v2:srd-2014:spell:fireball", Name: "Fireball"},
		{Key: "open5e_v2:srd-2024:spell:fireball", Name: "Fireball"},
		{Key: "open5e_v2:a5e-ag:spell:fireball", Name: "Fireball"},
		{Key: "open5e_v2:srd-2014:creature:goblin", Name: "Goblin"},
		{Key: "open5e_v2:a5e-ag:spell:shield", Name: "Shield"},
		{Key: "open5e_v2:srd-2014:armor:shield", Name: "Shield"},
	})
	if cat.total != 6 {
		t.Errorf("total %d, want 6", cat.total)
	}
	result := func(doc string, alternates ...string) *lkv1.Result {
		r := &lkv1.Result{Entity: &lkv1.Entity{Name: "Fireball", Kind: lkv1.Kind_KIND_SPELL, Document: &lkv1.Document{Key: doc}}}
		for _, a := range alternates {
			r.Alternates = append(r.Alternates, &lkv1.Alternate{DocumentKey: a})
		}
		return r
	}
	spells := lkv1.QueryService_LookupSpells_FullMethodName
	ask := func(name string, docs ...string) *lkv1.LookupSpellsRequest {
		c := &lkv1.Common{Name: name}
		if docs != nil {
			c.Documents = &lkv1.DocumentFilter{Documents: docs}
		}
		return &lkv1.LookupSpellsRequest{Common: c}
	}
	tests := []struct {
		name    string
		method  string
		req     any
		results []*lkv1.Result
		want    string // "" for no warning
	}{
		{"one copy of three stored", spells, ask("fireball"), []*lkv1.Result{result("a5e-ag")}, "More copies of Fireball are still loading (from srd-2014, srd-2024)"},
		{"two stored, one as an alternate", spells, ask("fireball"), []*lkv1.Result{result("srd-2014", "srd-2024")}, "More copies of Fireball are still loading (from a5e-ag)"},
		{"every copy stored", spells, ask("fireball"), []*lkv1.Result{result("srd-2014", "srd-2024", "a5e-ag")}, ""},
		{"the others filtered out", spells, ask("fireball", "SRD-2014"), []*lkv1.Result{result("srd-2014")}, ""},
		{"a filtered one still coming", spells, ask("fireball", "srd-2014", "srd-2024"), []*lkv1.Result{result("srd-2014")}, "(from srd-2024)"},
		{"a filter by alias", spells, ask("fireball", "srd-5e"), []*lkv1.Result{result("a5e-ag")}, ""},
		{"none stored yet", spells, ask("FIREBALL"), nil, "FIREBALL is not stored yet: it is still loading (from srd-2014, srd-2024, a5e-ag)"},
		{"another kind's name", lkv1.QueryService_LookupCreatures_FullMethodName, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Name: "fireball"}}, nil, ""},
		{"a name the load does not bring", spells, ask("wish"), nil, ""},
		{"a pattern", spells, ask("fire*"), nil, ""},
		{"the kind asked for, of a shared name", lkv1.QueryService_LookupEquipment_FullMethodName, &lkv1.LookupEquipmentRequest{Common: &lkv1.Common{Name: "shield"}}, nil, "shield is not stored yet: it is still loading (from srd-2014)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(cat.stillComing(tt.method, tt.req, &lkv1.LookupResponse{Results: tt.results}), " | ")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("warnings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoadNotice_add: while the load goes on, a lookup carries the
// per-name warning before the general one; once it is done, neither.
func TestLoadNotice_add(t *testing.T) {
	n := &loadNotice{catalogue: newBundledCatalogue([]vectorbundle.Entry{
		{Key: "open5e_v2:srd-2014:spell:fireball", Name: "Fireball"},
		{Key: "open5e_v2:a5e-ag:spell:fireball", Name: "Fireball"},
	})}
	req := &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: "fireball"}}
	answer := func() *lkv1.LookupResponse {
		r := &lkv1.LookupResponse{Results: []*lkv1.Result{{Entity: &lkv1.Entity{Name: "Fireball", Kind: lkv1.Kind_KIND_SPELL, Document: &lkv1.Document{Key: "srd-2014"}}}}}
		n.add(lkv1.QueryService_LookupSpells_FullMethodName, req, r)
		return r
	}
	n.set("LoreKeeper is still loading its content (1 of 2 entities stored)")
	if w := answer().GetWarnings(); len(w) != 2 || !strings.Contains(w[0], "a5e-ag") || !strings.Contains(w[1], "still loading its content") {
		t.Errorf("during the load: warnings %q", w)
	}
	// The list of documents is as partial as a lookup: it says so too.
	docs := func() []string {
		r := &lkv1.ListDocumentsResponse{}
		n.add(lkv1.QueryService_ListDocuments_FullMethodName, &lkv1.ListDocumentsRequest{}, r)
		return r.GetWarnings()
	}
	if w := docs(); len(w) != 1 || !strings.Contains(w[0], "still loading its content") {
		t.Errorf("list_documents during the load: warnings %q", w)
	}
	n.set("")
	if w := answer().GetWarnings(); len(w) != 0 {
		t.Errorf("after the load: warnings %q, want none", w)
	}
	if w := docs(); len(w) != 0 {
		t.Errorf("list_documents after the load: warnings %q, want none", w)
	}
}

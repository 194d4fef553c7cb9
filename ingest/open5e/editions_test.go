package open5e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

type description struct {
	Desc       string `json:"desc"`
	Document   string `json:"document"`
	GameSystem string `json:"gamesystem"`
}

// TestSnapshotEntities_editionsSplit: every v2 record that carries its
// books' texts side by side ("descriptions", Open5e's core document) becomes
// one entity per book, in that book's document and game system, holding
// that book's text alone. The records are read from the snapshot as the
// fetcher reads them; counts come from them.
func TestSnapshotEntities_editionsSplit(t *testing.T) {
	es := snapshot(t)
	byKey := map[string]*lkv1.Entity{}
	for _, e := range es {
		byKey[e.GetKey()] = e
	}
	srv, err := open5esnapshot.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	c, err := open5e.NewClient(srv.URL, &open5e.ClientOptions{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	perEdition := map[string]int{}
	split := 0
	for _, ep := range open5e.V2Endpoints {
		recs, err := c.List(t.Context(), ep.Path(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range recs {
			var r struct {
				Key, Name, Desc string
				Document        json.RawMessage
				Descriptions    []description
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if r.Desc != "" || len(r.Descriptions) == 0 {
				continue
			}
			split++
			slug := lkv1.Slugify(r.Name)
			if slug == "" {
				slug = lkv1.Slugify(r.Key) // alignments have no name
			}
			for _, d := range r.Descriptions {
				key := lkv1.EntityKey(lkv1.Source_SOURCE_OPEN5E_V2, d.Document, ep.Kind, slug)
				e := byKey[key]
				if e == nil {
					t.Errorf("%s %s: no entity %s for its %s text", ep.Path(), r.Key, key, d.Document)
					continue
				}
				delete(byKey, key)
				perEdition[ep.Kind.Slug()+" "+d.Document]++
				doc := e.GetDocument()
				if doc.GetGameSystem() != d.GameSystem || doc.GetName() == "" || doc.GetName() == doc.GetKey() {
					t.Errorf("%s: document %q %q (%s), want the catalogue's %s of game system %s", key, doc.GetKey(), doc.GetName(), doc.GetGameSystem(), d.Document, d.GameSystem)
				}
				if want := open5e.PlainHyphens(strings.TrimSpace(strings.ReplaceAll(d.Desc, "\r\n", "\n"))); e.GetDescription() != want {
					t.Errorf("%s: description %q, want its book's %q", key, e.GetDescription(), want)
				}
				var one struct{ Descriptions []description }
				if err := json.Unmarshal(e.GetSourceRecord(), &one); err != nil || len(one.Descriptions) != 1 || one.Descriptions[0] != d {
					t.Errorf("%s: source record's descriptions %+v (%v), want its own alone", key, one.Descriptions, err)
				}
			}
			var doc struct{ Key string }
			_ = json.Unmarshal(r.Document, &doc) // a string on some endpoints: then no compilation to check
			if doc.Key != "" && !slices.ContainsFunc(r.Descriptions, func(d description) bool { return d.Document == doc.Key }) {
				if e := byKey[lkv1.EntityKey(lkv1.Source_SOURCE_OPEN5E_V2, doc.Key, ep.Kind, slug)]; e != nil {
					t.Errorf("%s: still in %s, which has no text of its own", e.GetKey(), doc.Key)
				}
			}
		}
	}
	if split == 0 {
		t.Fatal("no record with per-book descriptions in the snapshot")
	}
	var lines []string
	for k, n := range perEdition {
		lines = append(lines, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(lines)
	t.Logf("%d records split; entities per kind and book: %s", split, strings.Join(lines, ", "))
}

// v2Conditions is how many entities /v2/conditions/ becomes: one per
// condition and edition.
func v2Conditions(t testing.TB) int {
	n := 0
	for _, e := range snapshot(t) {
		if e.GetKind() == lkv1.Kind_KIND_CONDITION && e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V2 {
			n++
		}
	}
	return n
}

// TestChallengeRatingXP_matchesTheBooks: the shared XP-by-CR table (which
// gives homebrew monsters their XP) agrees with every SRD creature's own.
func TestChallengeRatingXP_matchesTheBooks(t *testing.T) {
	n := 0
	for _, e := range snapshot(t) {
		c := e.GetCreature()
		if c == nil || c.GetExperiencePoints() == 0 || !strings.HasPrefix(e.GetDocument().GetKey(), "srd-") {
			continue
		}
		n++
		if xp, ok := lkv1.ChallengeRatingXP(c.GetChallengeRating()); !ok || xp != c.GetExperiencePoints() {
			t.Errorf("%s: CR %s gives %d XP (%v), the book says %d", e.GetKey(), c.GetChallengeRatingText(), xp, ok, c.GetExperiencePoints())
		}
	}
	if n == 0 {
		t.Fatal("no SRD creature with XP in the snapshot")
	}
	t.Logf("%d SRD creatures agree", n)
}

package open5e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

var (
	snapOnce sync.Once
	snap     []*lkv1.Entity
	snapErr  error
)

// snapshot is SnapshotEntities, computed once for the package's tests.
func snapshot(t testing.TB) []*lkv1.Entity {
	t.Helper()
	snapOnce.Do(func() { snap, snapErr = open5e.SnapshotEntities(context.Background()) })
	if snapErr != nil {
		t.Fatal(snapErr)
	}
	return snap
}

// recorded is the record count the pack's first page of an endpoint
// gives ("v2/spells").
func recorded(t *testing.T, endpoint string) int {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Count int }
	if err := json.Unmarshal(mustFile(t, h, endpoint+"/page-1.json"), &p); err != nil || p.Count == 0 {
		t.Fatalf("%s: count %d, %v", endpoint, p.Count, err)
	}
	return p.Count
}

// served is how many of SnapshotEntities come from an endpoint
// ("v1/spells"): for v1, the records that v2 does not repeat.
func served(t *testing.T, endpoint string) int {
	t.Helper()
	n := 0
	for _, e := range snapshot(t) {
		if strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/"+endpoint+"/") {
			n++
		}
	}
	return n
}

func mustFile(t *testing.T, h *open5esnapshot.Handler, name string) []byte {
	t.Helper()
	b, ok := h.File(name)
	if !ok {
		t.Fatalf("the snapshot has no %s", name)
	}
	return b
}

// packRecord is what the count tests read of a record of the pack: its
// name, its document, and the documents of its entities: its own, or for
// a v2 record carrying its books' texts side by side ("descriptions", the
// core document's conditions, skills, ...) each book's (splitEditions).
type packRecord struct {
	name, doc string
	docs      []string
	// gear is an item's nested weapon or armor key, own is its own key:
	// an item that is a weapons or armor record too is served as that
	// one (twins.go).
	gear, own string
}

// twin reports whether an item record is the same thing as a weapons or
// armor record ("srd_longsword" in itself, "srd_hide" in "srd_hide-armor").
func (r packRecord) twin() bool {
	return r.gear != "" && (r.gear == r.own || r.gear+"-armor" == r.own)
}

// packRecords reads every record of a list endpoint from the bundled
// snapshot's recorded pages (not through the fetcher under test).
func packRecords(t *testing.T, h *open5esnapshot.Handler, ep open5e.Endpoint) []packRecord {
	t.Helper()
	var out []packRecord
	for n := 1; ; n++ {
		b, ok := h.File(fmt.Sprintf("%s/%s/page-%d.json", ep.Version, ep.Name, n))
		if !ok {
			if n == 1 {
				t.Fatalf("the snapshot has no %s", ep)
			}
			return out
		}
		var page struct {
			Results []struct {
				Name, Key    string
				DocSlug      string          `json:"document__slug"`
				Document     json.RawMessage `json:"document"`
				Desc         any             `json:"desc"`
				Descriptions []struct {
					Desc, Document string
				}
				Weapon *struct{ Key string }
				Armor  *struct{ Key string }
			}
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("%s page %d: %v", ep, n, err)
		}
		for _, r := range page.Results {
			doc := r.DocSlug
			if ep.Version == "v2" {
				var d struct{ Key string }
				if json.Unmarshal(r.Document, &d) != nil {
					_ = json.Unmarshal(r.Document, &doc)
				} else {
					doc = d.Key
				}
			}
			name := r.Name
			if name == "" {
				name = r.Key
			}
			docs := []string{doc}
			if desc, _ := r.Desc.(string); ep.Version == "v2" && desc == "" && len(r.Descriptions) > 0 {
				docs = nil
				for _, d := range r.Descriptions {
					if strings.TrimSpace(d.Desc) != "" && !slices.Contains(docs, d.Document) {
						docs = append(docs, d.Document)
					}
				}
			}
			gear := ""
			if r.Weapon != nil {
				gear = r.Weapon.Key
			} else if r.Armor != nil {
				gear = r.Armor.Key
			}
			out = append(out, packRecord{strings.ToLower(name), doc, docs, gear, r.Key})
		}
	}
}

// epDoc is an endpoint's path and a document key.
type epDoc struct{ ep, doc string }

// loaded counts the entities by the endpoint their source URL names
// ("/v2/spells/") and their document.
func loaded(es []*lkv1.Entity) map[epDoc]int {
	got := map[epDoc]int{}
	for _, e := range es {
		u := strings.TrimPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin)
		parts := strings.SplitN(u, "/", 4) // "", "v2", "spells", rest
		if len(parts) < 4 {
			got[epDoc{u, e.GetDocument().GetKey()}]++
			continue
		}
		got[epDoc{"/" + parts[1] + "/" + parts[2] + "/", e.GetDocument().GetKey()}]++
	}
	return got
}

// duplicatedBooks derives from the pack which v1 (endpoint, document)
// pairs repeat a v2 book: those of which some v2 document holds at least
// half the names among its entities of the same kind. It returns them, with
// that v2 document, and for each v1 document the v2 document that holds
// the most names of its repeated pairs.
func duplicatedBooks(t *testing.T, h *open5esnapshot.Handler) (dup map[epDoc]string, closest map[string]string) {
	t.Helper()
	v2Names := map[open5e.KindDoc]map[string]bool{}
	for _, ep := range open5e.V2Endpoints {
		for _, r := range packRecords(t, h, ep) {
			k := open5e.KindDoc{Kind: ep.Kind, Document: r.doc}
			if v2Names[k] == nil {
				v2Names[k] = map[string]bool{}
			}
			v2Names[k][r.name] = true
		}
	}
	dup = map[epDoc]string{}
	shared := map[string]map[string]int{} // v1 document -> v2 document -> names of repeated pairs
	for _, ep := range open5e.V1Endpoints {
		names := map[string][]string{}
		for _, r := range packRecords(t, h, ep) {
			names[r.doc] = append(names[r.doc], r.name)
		}
		for doc, ns := range names {
			if shared[doc] == nil {
				shared[doc] = map[string]int{}
			}
			best, bestN := "", 0
			for k, v2 := range v2Names {
				if k.Kind != ep.Kind {
					continue
				}
				n := 0
				for _, name := range ns {
					if v2[name] {
						n++
					}
				}
				if n > bestN || n == bestN && n > 0 && k.Document < best {
					best, bestN = k.Document, n
				}
			}
			if bestN > 0 && 2*bestN >= len(ns) {
				dup[epDoc{ep.Path(), doc}] = best
				shared[doc][best] += bestN
			}
		}
	}
	closest = map[string]string{}
	for doc, m := range shared {
		best, bestN := "", 0
		for d, n := range m {
			if n > bestN || n == bestN && n > 0 && d < best {
				best, bestN = d, n
			}
		}
		closest[doc] = best
	}
	return dup, closest
}

// After a full fetch, every v2 endpoint's entities per document are as many
// as the pack's records, and each v1 endpoint's per document are all of its
// records or, where they repeat a v2 book (duplicatedBooks), none: no
// (book, kind) comes twice, through v1 and v2.
func TestSnapshotEntities_countsMatchPack(t *testing.T) {
	// The SRD 5.2 text's own entities are no record of the pack's
	// (text_test.go counts them).
	es := slices.DeleteFunc(slices.Clone(snapshot(t)), func(e *lkv1.Entity) bool {
		return e.GetDocument().GetSource() == lkv1.Source_SOURCE_SRD_TEXT
	})
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	got := loaded(es)
	want := map[epDoc]int{}
	twins := 0
	for _, ep := range open5e.V2Endpoints {
		for _, r := range packRecords(t, h, ep) {
			if ep.Name == "items" && r.twin() {
				twins++
				continue
			}
			for _, d := range r.docs {
				want[epDoc{ep.Path(), d}]++
			}
		}
	}
	dup, _ := duplicatedBooks(t, h)
	v2Rules := map[string]bool{} // "<document>/<slug>" of v2 rules and rule sections
	for _, ep := range open5e.V2Endpoints {
		if ep.Kind == lkv1.Kind_KIND_RULE || ep.Kind == lkv1.Kind_KIND_RULE_SECTION {
			for _, r := range packRecords(t, h, ep) {
				for _, d := range r.docs {
					v2Rules[d+"/"+lkv1.Slugify(r.name)] = true
				}
			}
		}
	}
	filled := 0
	for _, ep := range open5e.V1Endpoints {
		for _, r := range packRecords(t, h, ep) {
			twin, ok := dup[epDoc{ep.Path(), r.doc}]
			switch {
			case !ok:
				want[epDoc{ep.Path(), r.doc}]++
			case ep.Kind == lkv1.Kind_KIND_RULE_SECTION && !v2Rules[twin+"/"+lkv1.Slugify(r.name)]:
				// A section the v2 book left out: a section of that book.
				want[epDoc{ep.Path(), twin}]++
				filled++
			}
		}
	}
	total, books := 0, map[string]bool{}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s of %s: %d entities, want %d", k.ep, k.doc, got[k], n)
		}
		total += n
		books[k.doc] = true
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s of %s: %d entities, want none", k.ep, k.doc, n)
		}
	}
	if len(es) != total {
		t.Errorf("total: %d entities, want %d", len(es), total)
	}
	if filled == 0 {
		t.Error("no v1 section fills its v2 book: SRD 5.1's Rest is one v2 left out")
	}
	t.Logf("%d entities from %d documents; %d v1 (endpoint, document) pairs left out as duplicates of v2 but for %d sections the v2 book lacks, %d items as their weapon or armor", total, len(books), len(dup), filled, twins)
}

// Each v1 document's twin, as the catalog resolves it from the document
// records (v2_related_key, the stale "srd" and "a5e" included), is the v2
// document that shares the most names with it, and the v1 document is of
// its twin's game system.
func TestCatalog_V2Twins(t *testing.T) {
	cat, h := snapshotCatalogAndPages(t)
	_, closest := duplicatedBooks(t, h)
	n := 0
	for _, d := range cat.Documents() {
		if d.GetSource() != lkv1.Source_SOURCE_OPEN5E_V1 {
			continue
		}
		n++
		want := closest[d.GetKey()]
		twins := cat.V2Twins(d.GetKey())
		if want == "" && len(twins) == 0 {
			continue
		}
		if len(twins) == 0 || twins[0] != want {
			t.Errorf("v1 %s: twins %v, want first %q (most names in common)", d.GetKey(), twins, want)
			continue
		}
		if v2 := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, want); v2 == nil || d.GetGameSystem() != v2.GetGameSystem() {
			t.Errorf("v1 %s: game system %q, its twin %s's %v", d.GetKey(), d.GetGameSystem(), want, v2)
		}
	}
	if n == 0 {
		t.Fatal("no v1 documents in the catalog")
	}
}

func TestSnapshotEntities_wellFormed(t *testing.T) {
	es := snapshot(t)
	seen := map[string]bool{}
	for _, e := range es {
		src := e.GetDocument().GetSource()
		if strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/v1/") {
			src = lkv1.Source_SOURCE_OPEN5E_V1 // a v1 record, in its v2 book or its own
		}
		if want := lkv1.EntityKey(src, e.GetDocument().GetKey(), e.GetKind(), e.GetSlug()); e.GetKey() != want {
			t.Errorf("key %q, want %q", e.GetKey(), want)
		}
		if seen[e.GetKey()] {
			t.Errorf("duplicate key %s", e.GetKey())
		}
		seen[e.GetKey()] = true
		origin := open5e.CanonicalOrigin + "/v"
		if src == lkv1.Source_SOURCE_SRD_TEXT {
			origin = "srd-5.2-markdown/" // the file and line of the text
		}
		if e.GetName() == "" || e.GetSourceKey() == "" || !strings.HasPrefix(e.GetSourceUrl(), origin) {
			t.Errorf("%s: name %q source key %q url %q", e.GetKey(), e.GetName(), e.GetSourceKey(), e.GetSourceUrl())
		}
		if d := e.GetDocument(); d.GetName() == "" || len(d.GetLicenses()) == 0 || d.GetGameSystem() == "" || d.GetPublisher() == "" {
			t.Errorf("%s: document metadata incomplete: %v", e.GetKey(), d)
		}
		// A v2 entity is of the game system its record's document names
		// (Level Up's books are a5e, not 5e): an edition filter must not
		// mix them. (A core record split by edition is the edition's.)
		if src == lkv1.Source_SOURCE_OPEN5E_V2 {
			var rec struct {
				Document struct {
					Key        string
					Gamesystem struct{ Key string }
				}
			}
			if err := json.Unmarshal(e.GetSourceRecord(), &rec); err == nil && rec.Document.Key == e.GetDocument().GetKey() &&
				rec.Document.Gamesystem.Key != "" && rec.Document.Gamesystem.Key != e.GetDocument().GetGameSystem() {
				t.Errorf("%s: game system %q, its record says %q", e.GetKey(), e.GetDocument().GetGameSystem(), rec.Document.Gamesystem.Key)
			}
		}
		if !json.Valid(e.GetSourceRecord()) {
			t.Errorf("%s: source record is not JSON", e.GetKey())
		}
		if strings.Contains(string(e.GetSourceRecord()), "127.0.0.1") {
			t.Errorf("%s: source record keeps the mirror's address", e.GetKey())
		}
		if h := hashOf(t, e); e.GetContentHash() != h || len(h) != 64 {
			t.Errorf("%s: content hash %q, recomputed %q", e.GetKey(), e.GetContentHash(), h)
		}
		if e.GetFetchedAt() == nil {
			t.Errorf("%s: no fetched_at", e.GetKey())
		}
		if e.GetDetails() == nil {
			t.Errorf("%s: no typed details", e.GetKey())
		}
	}
}

func find(t *testing.T, key string) *lkv1.Entity {
	t.Helper()
	for _, e := range snapshot(t) {
		if e.GetKey() == key {
			return e
		}
	}
	t.Fatalf("no entity %s", key)
	return nil
}

func TestSnapshotEntities_fields(t *testing.T) {
	fb := find(t, "open5e_v2:srd-2014:spell:fireball").GetSpell()
	if fb.GetLevel() != 3 || fb.GetSchool() != "evocation" || fb.GetCastingTimeKey() != "action" ||
		strings.Join(fb.GetDamageTypes(), ",") != "fire" || strings.Join(fb.GetClasses(), ",") != "sorcerer,wizard" ||
		fb.GetSavingThrowAbility() != "dexterity" || fb.GetConcentration() || fb.GetArea() != "20-foot sphere" {
		t.Errorf("fireball: %v", fb)
	}
	gob := find(t, "open5e_v2:srd-2014:creature:goblin")
	g := gob.GetCreature()
	if g.GetChallengeRating() != 0.25 || g.GetChallengeRatingText() != "1/4" || g.GetType() != "humanoid" ||
		g.GetSize() != "small" || g.GetArmorClass() != 15 || g.GetHitPoints() != 7 || g.GetSkills()["stealth"] != 6 {
		t.Errorf("goblin: %v", g)
	}
	types := map[string]int{}
	for _, b := range gob.GetBlocks() {
		types[b.GetType()]++
	}
	if types["action"] < 2 || types["trait"] < 1 {
		t.Errorf("goblin blocks by type: %v", types)
	}
	var scimitar string
	for _, b := range gob.GetBlocks() {
		if b.GetName() == "Scimitar" {
			scimitar = b.GetAttack()
		}
	}
	// Upstream's structured attack says thunder with no bonus; its text
	// says 1d6 + 2 slashing, and the text wins.
	if scimitar != "+4 to hit, reach 5 ft., 1d6+2 slashing" {
		t.Errorf("goblin scimitar attack %q", scimitar)
	}
	drag := find(t, "open5e_v2:srd-2014:creature:adult-red-dragon").GetCreature()
	if !drag.GetHasLegendaryActions() || drag.GetChallengeRating() != 17 || drag.GetSpeed()["fly"] != 80 ||
		strings.Join(drag.GetDamageImmunities(), ",") != "fire" {
		t.Errorf("adult red dragon: %v", drag)
	}
	ls := find(t, "open5e_v2:srd-2014:weapon:longsword").GetItem().GetWeapon()
	if ls.GetDamageDice() != "1d8" || ls.GetVersatileDice() != "1d10" || ls.GetIsSimple() || ls.GetIsRanged() {
		t.Errorf("longsword: %v", ls)
	}
	bow := find(t, "open5e_v2:srd-2014:weapon:longbow").GetItem().GetWeapon()
	if !bow.GetIsRanged() || bow.GetRangeNormal() != 150 || bow.GetRangeLong() != 600 {
		t.Errorf("longbow: %v", bow)
	}
	plate := find(t, "open5e_v2:srd-2014:armor:plate").GetItem().GetArmor()
	if plate.GetCategory() != "heavy" || plate.GetAcBase() != 18 || !plate.GetStealthDisadvantage() || plate.GetStrengthRequired() != 15 {
		t.Errorf("plate: %v", plate)
	}
	rope := find(t, "open5e_v2:srd-2014:item:rope-hempen-50-feet").GetItem()
	if rope.GetCostGp() != 1 || rope.GetWeightLb() != 10 || rope.GetIsMagic() {
		t.Errorf("hempen rope: cost %v weight %v magic %v", rope.GetCostGp(), rope.GetWeightLb(), rope.GetIsMagic())
	}
	bag := find(t, "open5e_v2:srd-2014:magic-item:bag-of-holding").GetItem()
	if !bag.GetIsMagic() || bag.GetRarity() != "uncommon" {
		t.Errorf("bag of holding: %v", bag)
	}
	wiz := find(t, "open5e_v2:srd-2014:class:wizard")
	if wiz.GetCharacterOption().GetHitDice() != "d6" || len(wiz.GetBlocks()) == 0 || wiz.GetBlocks()[0].GetType() != "feature" {
		t.Errorf("wizard: %v, %d blocks", wiz.GetCharacterOption(), len(wiz.GetBlocks()))
	}
	evo := find(t, "open5e_v2:srd-2014:subclass:school-of-evocation").GetCharacterOption()
	if evo.GetParentKey() != "open5e_v2:srd-2014:class:wizard" || evo.GetParentName() != "Wizard" {
		t.Errorf("school of evocation parent: %v", evo)
	}
	hill := find(t, "open5e_v2:srd-2014:subrace:hill-dwarf").GetCharacterOption()
	if hill.GetParentKey() != "open5e_v2:srd-2014:race:dwarf" {
		t.Errorf("hill dwarf parent: %q", hill.GetParentKey())
	}
	dwarf := find(t, "open5e_v2:srd-2014:race:dwarf").GetCharacterOption()
	if dwarf.GetSize() != "medium" || dwarf.GetSpeed() != 25 {
		t.Errorf("dwarf: %v", dwarf)
	}
	stealth := find(t, "open5e_v2:srd-2014:skill:stealth").GetRule()
	if stealth.GetAbility() != "dexterity" {
		t.Errorf("stealth ability %q", stealth.GetAbility())
	}
	rule := find(t, "open5e_v2:srd-2014:rule:ability-checks").GetRule()
	if rule.GetSection() != "abilities" || rule.GetSectionName() == "" {
		t.Errorf("rule section: %v", rule)
	}
	for _, k := range []string{"open5e_v2:srd-2024:condition:grappled", "open5e_v2:srd-2014:alignment:chaotic-evil"} {
		if e := find(t, k); e.GetDescription() == "" {
			t.Errorf("%s: no description", k)
		}
	}
	axe := find(t, "open5e_v1:toh:weapon:axespear").GetItem()
	if axe.GetCostGp() != 25 || axe.GetWeightLb() != 8 || axe.GetWeapon().GetDamageDice() != "1d8" {
		t.Errorf("v1 axespear: %v", axe)
	}
}

// ExampleSnapshotEntities prints "Fireball 3 System Reference Document
// 5.1". It is compiled, not run (it has no Output line): running it would
// normalise the whole snapshot a second time, 36 s under the race
// detector, for what the tests above check of the package's one snapshot.
func ExampleSnapshotEntities() {
	es, err := open5e.SnapshotEntities(context.Background())
	if err != nil {
		panic(err)
	}
	for _, e := range es {
		if e.GetKey() == "open5e_v2:srd-2014:spell:fireball" {
			fmt.Println(e.GetName(), e.GetSpell().GetLevel(), e.GetDocument().GetName())
		}
	}
}

// BenchmarkSnapshotEntities fetches and normalises the whole snapshot over
// a loopback listener, without NATS.
func BenchmarkSnapshotEntities(b *testing.B) {
	n := 0
	start := time.Now()
	for b.Loop() {
		es, err := open5e.SnapshotEntities(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n += len(es)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "entities/s")
}

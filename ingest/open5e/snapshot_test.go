package open5e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"lorekeeper.dev/ingest/open5e"
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

// manifestCounts are the entity counts per (source, kind, document) derived
// from the "Entity counts" table of the snapshot's manifest (the data pack
// the bundled tarball was made from, built 2026-11-22): each v2 endpoint's
// per-document counts, classes split
// into classes and subclasses and species into species and subspecies by
// the records' subclass_of / is_subspecies; v1 rows only for the pairs v2
// lacks (spec/README.md "Open5e v1 vs v2").
var manifestCounts = map[string]int{
	"open5e_v2 spell a5e-ag": 371, "open5e_v2 spell deepm": 515, "open5e_v2 spell open5e": 2,
	"open5e_v2 spell srd-2014": 319, "open5e_v2 spell srd-2024": 339, "open5e_v2 spell toh": 91,
	"open5e_v2 creature srd-2014": 325, "open5e_v2 creature srd-2024": 331, "open5e_v2 creature tob": 391,
	"open5e_v2 weapon srd-2014": 37, "open5e_v2 weapon srd-2024": 38,
	"open5e_v2 armor srd-2014": 12, "open5e_v2 armor srd-2024": 13,
	"open5e_v2 magic-item srd-2014": 499, "open5e_v2 magic-item srd-2024": 757,
	"open5e_v2 item srd-2014": 237, "open5e_v2 item srd-2024": 203,
	// classes: toh 76, srd-2024 24, srd-2014 24, open5e 16, a5e-ag 4
	"open5e_v2 class srd-2014": 12, "open5e_v2 class srd-2024": 12, "open5e_v2 class a5e-ag": 1,
	"open5e_v2 subclass srd-2014": 12, "open5e_v2 subclass srd-2024": 12, "open5e_v2 subclass a5e-ag": 3,
	"open5e_v2 subclass open5e": 16, "open5e_v2 subclass toh": 76,
	// species: toh 40, srd-2014 13, srd-2024 9, open5e 1
	"open5e_v2 race srd-2014": 9, "open5e_v2 race srd-2024": 9, "open5e_v2 race toh": 11,
	"open5e_v2 subrace srd-2014": 4, "open5e_v2 subrace toh": 29, "open5e_v2 subrace open5e": 1,
	"open5e_v2 background a5e-ag": 21, "open5e_v2 background toh": 19, "open5e_v2 background srd-2024": 4,
	"open5e_v2 background open5e": 2, "open5e_v2 background srd-2014": 1,
	"open5e_v2 feat a5e-ag": 59, "open5e_v2 feat srd-2024": 17, "open5e_v2 feat toh": 13, "open5e_v2 feat srd-2014": 1,
	"open5e_v2 rule srd-2014": 227, "open5e_v2 rule srd-2024": 56,
	"open5e_v2 rule-section srd-2014": 41, "open5e_v2 rule-section srd-2024": 11,
	"open5e_v2 condition core": 15, "open5e_v2 condition a5e-ag": 6,
	"open5e_v2 damage-type core":         13,
	"open5e_v2 weapon-property srd-2014": 12, "open5e_v2 weapon-property srd-2024": 17,
	"open5e_v2 skill core": 18, "open5e_v2 skill a5e-ag": 2,
	"open5e_v2 ability-score core": 6,
	"open5e_v2 magic-school core":  8, "open5e_v2 magic-school a5e-ag": 1,
	"open5e_v2 language core": 18, "open5e_v2 language tob": 1,
	"open5e_v2 alignment core": 9,
	// v1 fill-ins.
	"open5e_v1 armor toh":      5,
	"open5e_v1 magic-item a5e": 546, "open5e_v1 magic-item toh": 29,
	"open5e_v1 spell dmag-e": 64, "open5e_v1 spell warlock": 43, "open5e_v1 spell kp": 31,
	"open5e_v1 weapon toh": 31,
}

func TestSnapshotEntities_countsMatchManifest(t *testing.T) {
	es := snapshot(t)
	got := map[string]int{}
	for _, e := range es {
		got[e.GetDocument().GetSource().Slug()+" "+e.GetKind().Slug()+" "+e.GetDocument().GetKey()]++
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range manifestCounts {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	total := 0
	for _, k := range keys {
		if got[k] != manifestCounts[k] {
			t.Errorf("%s: got %d entities, want %d", k, got[k], manifestCounts[k])
		}
		total += manifestCounts[k]
	}
	if len(es) != total {
		t.Errorf("total: got %d, want %d", len(es), total)
	}
}

// The v1 fill-ins are exactly the v1 (kind, document) pairs whose book v2
// does not serve that kind from.
func TestSnapshotEntities_v1FillsOnlyGaps(t *testing.T) {
	es := snapshot(t)
	v2 := open5e.Coverage{}
	v1Pairs := map[open5e.KindDoc]bool{}
	for _, e := range es {
		p := open5e.KindDoc{Kind: e.GetKind(), Document: e.GetDocument().GetKey()}
		if e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V2 {
			v2[p] = true
		} else {
			v1Pairs[p] = true
		}
	}
	var got []string
	for p := range v1Pairs {
		for _, d := range open5e.V1Equivalents[p.Document] {
			if v2[open5e.KindDoc{Kind: p.Kind, Document: d}] {
				t.Errorf("v1 %s from %s is kept although v2 has it from %s", p.Kind.Slug(), p.Document, d)
			}
		}
		got = append(got, p.Kind.Slug()+"/"+p.Document)
	}
	sort.Strings(got)
	want := "armor/toh magic-item/a5e magic-item/toh spell/dmag-e spell/kp spell/warlock weapon/toh"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("v1 pairs:\n got %s\nwant %s", g, want)
	}
}

func TestSnapshotEntities_wellFormed(t *testing.T) {
	es := snapshot(t)
	seen := map[string]bool{}
	for _, e := range es {
		src := e.GetDocument().GetSource()
		if want := lkv1.EntityKey(src, e.GetDocument().GetKey(), e.GetKind(), e.GetSlug()); e.GetKey() != want {
			t.Errorf("key %q, want %q", e.GetKey(), want)
		}
		if seen[e.GetKey()] {
			t.Errorf("duplicate key %s", e.GetKey())
		}
		seen[e.GetKey()] = true
		if e.GetName() == "" || e.GetSourceKey() == "" || !strings.HasPrefix(e.GetSourceUrl(), open5e.CanonicalOrigin+"/v") {
			t.Errorf("%s: name %q source key %q url %q", e.GetKey(), e.GetName(), e.GetSourceKey(), e.GetSourceUrl())
		}
		if d := e.GetDocument(); d.GetName() == "" || len(d.GetLicenses()) == 0 || d.GetGameSystem() == "" || d.GetPublisher() == "" {
			t.Errorf("%s: document metadata incomplete: %v", e.GetKey(), d)
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
	stealth := find(t, "open5e_v2:core:skill:stealth").GetRule()
	if stealth.GetAbility() != "dexterity" {
		t.Errorf("stealth ability %q", stealth.GetAbility())
	}
	rule := find(t, "open5e_v2:srd-2014:rule:ability-checks").GetRule()
	if rule.GetSection() != "abilities" || rule.GetSectionName() == "" {
		t.Errorf("rule section: %v", rule)
	}
	for _, k := range []string{"open5e_v2:core:condition:grappled", "open5e_v2:core:alignment:chaotic-evil"} {
		if e := find(t, k); e.GetDescription() == "" {
			t.Errorf("%s: no description", k)
		}
	}
	axe := find(t, "open5e_v1:toh:weapon:axespear").GetItem()
	if axe.GetCostGp() != 25 || axe.GetWeightLb() != 8 || axe.GetWeapon().GetDamageDice() != "1d8" {
		t.Errorf("v1 axespear: %v", axe)
	}
}

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
	// Output: Fireball 3 System Reference Document 5.1
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

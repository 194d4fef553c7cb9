package open5e_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/srddb"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// v1SRD is Open5e's v1 records of SRD 5.1 (wotc-srd) of the kinds the
// cross-check reads, normalised: the other source it weighs.
func v1SRD(t *testing.T) []*lkv1.Entity {
	t.Helper()
	cat, h := snapshotCatalogAndPages(t)
	var out []*lkv1.Entity
	for _, name := range []string{"monsters", "spells", "weapons", "armor", "magicitems", "conditions", "classes"} {
		var recs []json.RawMessage
		for _, r := range pageRecords(t, h, "v1/"+name) {
			var doc struct {
				Slug string `json:"document__slug"`
			}
			if json.Unmarshal(r, &doc) == nil && doc.Slug == "wotc-srd" {
				recs = append(recs, r)
			}
		}
		es, errs := open5e.NormalizeEndpoint(endpoints("v1/" + name)[0], recs, cat)
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		out = append(out, es...)
	}
	return out
}

// TestCrossCheckSRD compares the whole SRD 5.1 of the catalogue, field by
// field, with its second transcription a second time: ingestion compared
// it once and corrected what the SRD's text decides, so this run finds
// every disagreement settled and changes nothing. It prints the agreement
// table: per kind and field, the comparisons that agreed from the start,
// those Open5e's record was corrected for, those where the transcription
// errs, and none unresolved.
func TestCrossCheckSRD(t *testing.T) {
	db, err := srddb.Load()
	if err != nil {
		t.Fatal(err)
	}
	changed, report := open5e.CrossCheckSRD(db, snapshot(t), v1SRD(t))
	t.Logf("SRD 5.1 against its second transcription (5e-database):\n%s", report.Table())
	if path := os.Getenv("LOREKEEPER_SRD_REPORT"); path != "" {
		var b strings.Builder
		for _, kind := range report.Kinds() {
			for _, ex := range report.Disagreements(kind) {
				b.WriteString(kind + " " + ex + "\n")
			}
		}
		_ = os.WriteFile(path, []byte(b.String()), 0o644)
	}
	for _, e := range changed {
		t.Errorf("%s: corrected again on a second check", e.GetKey())
	}
	if n := report.Unresolved(); n > 0 {
		for _, kind := range report.Kinds() {
			for _, ex := range report.Disagreements(kind) {
				if strings.HasPrefix(ex, "unresolved") {
					t.Errorf("%s %s", kind, ex)
				}
			}
		}
		t.Errorf("%d disagreements unresolved", n)
	}
	if report.Compared() == 0 {
		t.Error("nothing compared")
	}
}

// The SRD 5.1 facts the cross-check put right, as DMs met them: the Wight's
// resistances filed as immunities, the Zombie's lost poison immunity, the
// heavy weapons, Spike Growth's garbled text, Web on the druid's list.
func TestCrossCheckSRD_facts(t *testing.T) {
	w := find(t, "open5e_v2:srd-2014:creature:wight").GetCreature()
	if strings.Join(w.GetDamageImmunities(), ",") != "poison" || !strings.Contains(entryTexts(w.GetDamageResistanceEntries()), "necrotic; bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons") ||
		strings.Join(w.GetConditionImmunities(), ",") != "exhaustion,poisoned" {
		t.Errorf("wight: immunities %q, resistances %q, condition immunities %q", w.GetDamageImmunities(), entryTexts(w.GetDamageResistanceEntries()), w.GetConditionImmunities())
	}
	if z := find(t, "open5e_v2:srd-2014:creature:zombie").GetCreature(); strings.Join(z.GetDamageImmunities(), ",") != "poison" {
		t.Errorf("zombie immunities %q", z.GetDamageImmunities())
	}
	for _, k := range []string{"greatsword", "glaive", "halberd", "maul", "pike", "longbow", "crossbow-heavy"} {
		if p := find(t, "open5e_v2:srd-2014:weapon:"+k).GetItem().GetWeapon().GetProperties(); !slices.Contains(p, "heavy") {
			t.Errorf("%s: properties %q lack heavy", k, p)
		}
	}
	if p := find(t, "open5e_v2:srd-2014:weapon:trident").GetItem().GetWeapon().GetProperties(); slices.Contains(p, "two-handed") {
		t.Errorf("trident: properties %q", p)
	}
	sg := find(t, "open5e_v2:srd-2014:spell:spike-growth")
	if strings.Contains(sg.GetDescription(), "spell is spell casts") || !strings.Contains(sg.GetSpell().GetMaterialSpecified(), "each sharpened to a point") {
		t.Errorf("spike growth: %q / %q", sg.GetDescription(), sg.GetSpell().GetMaterialSpecified())
	}
	for _, k := range []string{"web", "acid-arrow", "misty-step", "blur", "invisibility", "mirror-image"} {
		if c := find(t, "open5e_v2:srd-2014:spell:"+k).GetSpell().GetClasses(); slices.Contains(c, "druid") {
			t.Errorf("%s: classes %q (a druid has it through the Circle of the Land alone)", k, c)
		}
	}
}

func entryTexts(ds []*lkv1.Defense) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.GetText())
	}
	return strings.Join(out, "; ")
}

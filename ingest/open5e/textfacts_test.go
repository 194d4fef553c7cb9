package open5e_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// A text's damage types, saving throw and conditions are read as the book
// words them, and what it only names (an immunity, a negation, damage the
// caster takes) is not.
func TestTextFacts(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // "types|save/DC|conditions"
	}{
		{"a save, two types, knocked prone", "Each of those creatures must succeed on a DC 16 Strength or Dexterity saving throw (target's choice) or be knocked prone and take 14 (3d6 + 4) bludgeoning damage plus 14 (3d6 + 4) slashing damage.",
			"bludgeoning,slashing|strength/16|prone"},
		{"SRD 5.2's save line", "Constitution Saving Throw: DC 19, each creature in a 60-foot Cone. Failure: 54 (12d8) Cold damage. Success: Half damage.",
			"cold|constitution/19|"},
		{"SRD 5.2's condition", "Failure: The target has the Paralyzed condition until the end of its next turn.", "||paralyzed"},
		{"a cantrip's save", "The target must succeed on a dexterity saving throw or take 1d6 acid damage.", "acid|dexterity|"},
		{"conditions run together", "it is charmed and incapacitated for the duration", "||charmed,incapacitated"},
		{"negated", "the target can't be charmed or frightened", "||"},
		{"already in it", "A creature that is frightened has disadvantage on its attack rolls.", "||"},
		{"a state tested (SRD 5.2)", "If the creature has the Prone condition, it can use its Reaction to stand up.", "||"},
		{"a state tested", "if the target is grappled, it takes an extra 1d6 damage", "||"},
		{"inflicted after a test", "If it fails, it is paralyzed until the end of its next turn.", "||paralyzed"},
		{"inflicted after a failed save", "If the target fails the save, it has the Frightened condition.", "||frightened"},
		{"an immunity", "you are immune to acid and poison damage and to the poisoned condition", "||"},
		{"a resistance", "the target has resistance to nonmagical bludgeoning, piercing, and slashing damage", "||"},
		{"damage the caster takes", "the stress of casting this spell weakens you: you take 1d10 necrotic damage per level of that spell", "||"},
		{"damage that cannot be dealt", "You can't create sufficient heat or cold to cause damage, a sound loud enough to deal thunder damage or deafen a creature", "||"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			types, save, dc, conds := open5e.TextFacts(tt.text)
			if dc > 0 {
				save += fmt.Sprintf("/%d", dc)
			}
			got := strings.Join(types, ",") + "|" + save + "|" + strings.Join(conds, ",")
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// What the text says reaches the fields that filter: the cantrips whose
// records lack the damage type their save deals have it; a structured
// attack that the v2 text only names is the v1 text's attack; a usage in a
// v1 name is kept; saves and skills all +0 that the scores forbid are none,
// a +0 the scores allow is kept; the classes v1 names that no v2 spell
// does (Level Up's Herald and Artificer) are the spells' classes.
func TestSnapshotEntities_textReachesFields(t *testing.T) {
	for key, typ := range map[string]string{
		"open5e_v2:srd-2014:spell:acid-splash": "acid", "open5e_v2:srd-2014:spell:sacred-flame": "radiant",
		"open5e_v2:srd-2014:spell:poison-spray": "poison", "open5e_v2:srd-2014:spell:vicious-mockery": "psychic",
	} {
		if s := find(t, key).GetSpell(); !slices.Contains(s.GetDamageTypes(), typ) || s.GetSavingThrowAbility() == "" {
			t.Errorf("%s: damage types %q, save %q; want %s and a save", key, s.GetDamageTypes(), s.GetSavingThrowAbility(), typ)
		}
	}
	if c := find(t, "open5e_v2:srd-2014:spell:hold-person").GetSpell().GetConditions(); !slices.Equal(c, []string{"paralyzed"}) {
		t.Errorf("hold person inflicts %q, want paralyzed", c)
	}

	// Its v2 record files only the legendary "Void Claw: The herald makes
	// one void claw attack.", with the attack's numbers; v1 gives the
	// action, whose text says them.
	herald := find(t, "open5e_v2:tob2:creature:herald-of-the-void")
	var claw []string
	for _, b := range herald.GetBlocks() {
		if b.GetName() == "Void Claw" {
			claw = append(claw, fmt.Sprintf("%s %q: %.60s", b.GetType(), b.GetDamageTypes(), b.GetText()))
		}
	}
	want := []string{`action ["cold" "force"]: Melee Weapon Attack: +9 to hit, reach 10 ft., one target. Hi`,
		`legendary_action []: The herald makes one void claw attack.`}
	if !slices.Equal(claw, want) {
		t.Errorf("herald of the void's Void Claw blocks\n got %q\nwant %q", claw, want)
	}
	if hasCorrection(herald, "Void Claw", "attack") {
		t.Errorf("herald of the void: the Void Claw attack is footnoted as dropped: %v", herald.GetCorrections())
	}
	flare := false
	for _, b := range find(t, "open5e_v2:ccdx:creature:alnaar").GetBlocks() {
		flare = flare || b.GetName() == "Flare (Recharge Special)"
	}
	if !flare {
		t.Error("the alnaar's Flare lost its usage (Recharge Special)")
	}

	for _, key := range []string{"open5e_v2:srd-2014:creature:elephant", "open5e_v2:srd-2014:creature:camel"} {
		if c := find(t, key).GetCreature(); len(c.GetSavingThrows()) > 0 || len(c.GetSkills()) > 0 {
			t.Errorf("%s: saves %v, skills %v; want none", key, c.GetSavingThrows(), c.GetSkills())
		}
	}
	if s := find(t, "open5e_v2:srd-2014:creature:zombie").GetCreature().GetSavingThrows(); len(s) != 1 || s["wisdom"] != 0 {
		t.Errorf("zombie saves %v, want Wis +0", s)
	}

	classes := map[string]int{}
	for _, e := range snapshot(t) {
		if e.GetDocument().GetKey() == "a5e-ag" && e.GetSpell() != nil {
			for _, c := range e.GetSpell().GetClasses() {
				classes[c]++
			}
		}
	}
	named := v1SpellClasses(t, "a5e")
	for _, c := range []string{"herald", "artificer"} {
		if named[c] == 0 || classes[c] != named[c] {
			t.Errorf("%d Level Up spells have the class %s, its v1 records name it on %d", classes[c], c, named[c])
		}
	}
	if s := find(t, "open5e_v2:a5e-ag:spell:find-steed").GetSpell(); !slices.Contains(s.GetClasses(), "herald") {
		t.Errorf("find steed's classes %q lack the herald", s.GetClasses())
	}
}

// v1SpellClasses counts the classes the v1 spell records of a document
// name on their "Classes:" line (dnd_class), by slug, from the pack's
// pages.
func v1SpellClasses(t *testing.T, doc string) map[string]int {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]int{}
	for _, raw := range pageRecords(t, h, "v1/spells") {
		var r struct {
			Doc      string `json:"document__slug"`
			DndClass string `json:"dnd_class"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Doc != doc {
			continue
		}
		for _, c := range strings.Split(r.DndClass, ",") {
			if c = lkv1.Slugify(c); c != "" {
				named[c]++
			}
		}
	}
	return named
}

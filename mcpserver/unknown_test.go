package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/orcbrew"
)

// An OrcBrew monster that gives only its name, type, size and challenge
// rating has no armor class, hit points or ability scores on its card or
// in its structured result: what the file leaves out is unknown, never 0.
func TestOrcBrew_unknownIsNotZero(t *testing.T) {
	f, err := orcbrew.Decode("sparse.orcbrew", []byte(`{"Sparse" {:orcpub.dnd.e5/monsters {:wisp {:name "Marsh Wisp" :type :fey :size :tiny :challenge 0.25}}}}`), nil)
	if err != nil || len(f.Entities) != 1 {
		t.Fatalf("decode: %v, %d entities", err, len(f.Entities))
	}
	e := entityFromProto(f.Entities[0], "lorekeeper://entity/x")
	card := renderEntity(&e)
	for _, no := range []string{"Armor Class", "Hit Points", "0 (-5)", "| STR |", "passive Perception 0", "\n\n\n"} {
		if strings.Contains(card, no) {
			t.Errorf("card shows %q:\n%s", no, card)
		}
	}
	if !strings.Contains(card, "**Challenge** 1/4") {
		t.Errorf("card lacks what the file gives:\n%s", card)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, no := range []string{`"armor_class"`, `"hit_points"`, `"ability_scores"`, `"passive_perception"`} {
		if strings.Contains(string(b), no) {
			t.Errorf("structured result has %s: %s", no, b)
		}
	}
	if s := keyFacts(&e); strings.Contains(s, "AC 0") || strings.Contains(s, "HP 0") {
		t.Errorf("key facts %q", s)
	}
}

// A spell card prints its duration as the books do ("Concentration, up to
// 1 minute") and the damage types its record has without a roll (Acid
// Splash's acid).
func TestRender_spellAsPrinted(t *testing.T) {
	e := Entity{Kind: "spell", Name: "Test Hold", Spell: &Spell{Level: 2, School: "enchantment", Duration: "1 minute", Concentration: true, DamageTypes: []string{"acid"}}}
	card := renderEntity(&e)
	for _, want := range []string{"**Duration:** Concentration, up to 1 minute", "**Damage:** acid"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	e.Spell.Duration = "Until dispelled"
	if card := renderEntity(&e); !strings.Contains(card, "**Duration:** Concentration, Until dispelled") {
		t.Errorf("a duration that is no amount is left as it is:\n%s", card)
	}
}

package orcbrew_test

import (
	"path/filepath"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/orcbrew"
)

// The builder's fields become blocks as a card says them (builder.go).
func TestDecode_BuilderBlocks(t *testing.T) {
	blocks := map[string]map[string]string{} // entity key -> block name -> text
	prereq := map[string]string{}
	for _, file := range []string{"jnwhiteh-orcbrew-utils_example.orcbrew", "orcpub-dmv_coverage-pak.orcbrew", "orcpub-dmv_demo-content.orcbrew"} {
		f, err := orcbrew.Decode(file, readSample(t, filepath.Join(good, file)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range f.Entities {
			m := map[string]string{}
			for _, b := range e.GetBlocks() {
				m[b.GetName()] = b.GetText()
			}
			blocks[e.GetKey()] = m
			prereq[e.GetKey()] = e.GetCharacterOption().GetPrerequisite()
		}
	}
	tests := []struct{ key, block, want string }{
		{"orcbrew:test:race:myrace", "Ability Score Increase", "Constitution +1, Strength +1"},
		{"orcbrew:test:race:myrace", "Darkvision", "60 ft."},
		{"orcbrew:test:race:myrace", "Spells", "Acid splash (Charisma), Aid (from level 2; Charisma)"},
		{"orcbrew:test:race:myrace", "Flying Speed", "10 ft."},
		{"orcbrew:test:race:myrace", "Proficiencies", "tool: bagpipes; weapon proficiency options: from crossbow light, shortbow"},
		{"orcbrew:test:subrace:mysubrace", "Languages", "abyssal, deep speech"},
		{"orcbrew:test:class:myclass", "Spellcasting", "Spellcasting ability Charisma; the bard spell list; spells known gained by level: 3: 3; 4: 1;"},
		{"orcbrew:test:class:myclass", "MySubclassTitle", "Chosen at level 2 from this class's subclasses."},
		{"orcbrew:test:class:myclass", "Ability Score Improvement", "At levels 4, 8, 12, 16, 19."},
		{"orcbrew:test:class:myclass", "Spell", "Druidcraft (Strength)"},
		{"orcbrew:test:background:mybackground", "Equipment", "abacus, alchemists supplies, amulet, clothes common, disguise kit; Musical Instruments (one of bagpipes,"},
		{"orcbrew:test:background:mybackground", "Equipment", "; 10 gp"},
		{"orcbrew:test:feat:myfeat", "Ability Score Increase", "+1 to one of Charisma, Constitution, Dexterity, Intelligence, Strength, Wisdom, and proficiency in its saving throws"},
		{"orcbrew:demo-content:feat:demo-tough", "Ability Score Increase", "Constitution +1, any ability of your choice +1"},
		{"orcbrew:coverage-pak:subclass:wayfarer", "Waymark (Action)", "Coverage: an action."},
		{"orcbrew:coverage-pak:subclass:wayfarer", "Quick Step (Bonus Action)", "Coverage: a bonus action."},
		{"orcbrew:coverage-pak:subclass:wayfarer", "Attacks per Action", "2"},
		{"orcbrew:coverage-pak:subclass:wayfarer", "Wayfarer routes", "Choose 2."},
	}
	for _, tt := range tests {
		got, ok := blocks[tt.key][tt.block]
		if !ok || !strings.Contains(got, tt.want) {
			t.Errorf("%s: block %q is %q (present %v), want it to hold %q", tt.key, tt.block, got, ok, tt.want)
		}
	}
	// The class's saving throws are its own field, not repeated as a block.
	if p := blocks["orcbrew:test:class:myclass"]["Proficiencies"]; strings.Contains(p, "save") {
		t.Errorf("myclass's Proficiencies repeat its saving throws: %q", p)
	}
	if got := prereq["orcbrew:test:feat:myfeat"]; !strings.HasSuffix(got, "Race: dragonborn, dwarf, elf, gnome, half elf, half orc, halfling, human, myrace, tiefling") {
		t.Errorf("myfeat's prerequisite %q does not name its races", got)
	}
}

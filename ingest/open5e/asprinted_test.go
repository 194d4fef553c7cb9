package open5e_test

import (
	"regexp"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
)

// "ft." is the book's only after a number: inside prose it is "feet".
func TestProseFeet(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"it can then use this action to land on its ft. in a space", "it can then use this action to land on its feet in a space"},
		{"dim light for an additional number of ft. equal to the chosen radius", "dim light for an additional number of feet equal to the chosen radius"},
		{"it lands on its ft. The ground shakes.", "it lands on its feet. The ground shakes."},
		{"Melee Weapon Attack: +7 to hit, reach 5 ft., one target.", "Melee Weapon Attack: +7 to hit, reach 5 ft., one target."},
		{"within 120 ft. of the dragon", "within 120 ft. of the dragon"},
	} {
		if got := open5e.ProseFeet(tc.in); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A run-on spell list is one list to a line and one spell from the next.
func TestSpellLists(t *testing.T) {
	names := map[string]bool{"mending": true, "minor illusion": true, "prestidigitation": true, "entangle": true, "mirror image": true,
		"confusion": true, "conjure animals": true, "dimension door": true, "detect thoughts": true, "mage hand": true, "telekinesis": true}
	for _, tc := range []struct{ in, want string }{
		{"Wis (DC 13) no material components: At will: mending minor illusion prestidigitation3/day ea: entangle mirror image1/day ea: confusion conjure animals dimension door",
			"Wis (DC 13) no material components:  \nAt will: mending, minor illusion, prestidigitation  \n3/day ea: entangle, mirror image  \n1/day ea: confusion, conjure animals, dimension door"},
		{"Cha (DC 18) no spell components: At will: detect thoughts mage hand (the hand is invisible)3/day ea: dimension door telekinesis1/day: hallucinatory terrain (as an action)",
			"Cha (DC 18) no spell components:  \nAt will: detect thoughts, mage hand (the hand is invisible)  \n3/day ea: dimension door, telekinesis  \n1/day: hallucinatory terrain (as an action)"},
	} {
		if got := open5e.SpellLists(tc.in, names); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// No text of the snapshot runs one spell list into the next, nor writes
// "ft." after a word.
func TestSnapshotEntities_asPrinted(t *testing.T) {
	runOn := regexp.MustCompile(`[a-z)]\d+/day\b`)
	prose := regexp.MustCompile(`\b(?:its|of|their|the) ft\.`)
	lists := 0
	for _, e := range snapshot(t) {
		for _, text := range append([]string{e.GetDescription()}, blockTexts(e)...) {
			if runOn.MatchString(text) {
				t.Errorf("%s: a spell list runs on: %q", e.GetKey(), runOn.FindString(text))
			}
			if m := prose.FindString(text); m != "" {
				t.Errorf("%s: %q in prose", e.GetKey(), m)
			}
			if strings.Contains(text, "  \nAt will: ") {
				lists++
			}
		}
	}
	if lists == 0 {
		t.Error("no spell list was mended: the test checks nothing")
	}
	t.Logf("%d spellcasting texts written a list to a line", lists)
}

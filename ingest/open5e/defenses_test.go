package open5e_test

import (
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"sort"
	"strings"
	"testing"

	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// entry writes a defense as "types|qualifier|text".
func entry(d *lkv1.Defense) string {
	return strings.Join(d.GetTypes(), ",") + "|" + d.GetQualifier() + "|" + d.GetText()
}

func entries(ds []*lkv1.Defense) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, entry(d))
	}
	return out
}

// A damage or condition line is read as the book prints it: each entry's
// types, what limits them, and its words, from lines of the snapshot.
func TestReadDefenses(t *testing.T) {
	tests := []struct {
		name, line  string
		conditions  bool
		want, moved []string
	}{
		{"the werewolf's", "bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons", false,
			[]string{"bludgeoning,piercing,slashing|from nonmagical attacks not made with silvered weapons|bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons"}, nil},
		{"two entries", "necrotic; bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons", false,
			[]string{"necrotic||necrotic", "bludgeoning,piercing,slashing|from nonmagical attacks not made with silvered weapons|bludgeoning, piercing, and slashing from nonmagical attacks not made with silvered weapons"}, nil},
		{"a qualifier with a comma", "piercing and slashing damage from nonmagical, non-adamantine weapons", false,
			[]string{"piercing,slashing|damage from nonmagical, non-adamantine weapons|piercing and slashing damage from nonmagical, non-adamantine weapons"}, nil},
		{"weapons, no type named", "acid, cold; damage from nonmagical weapons", false,
			[]string{"acid,cold||acid, cold", "bludgeoning,piercing,slashing|damage from nonmagical weapons|damage from nonmagical weapons"}, nil},
		{"abbreviated", "acid, cold, fire, lighting, thunder; nonmagic B/P/S attacks not made w/silvered weapons", false,
			[]string{"acid,cold,fire,lightning,thunder||acid, cold, fire, lighting, thunder",
				"bludgeoning,piercing,slashing|nonmagic B/P/S attacks not made w/silvered weapons|nonmagic B/P/S attacks not made w/silvered weapons"}, nil},
		{"Black Flag's one line", "fire,poison; bludgeoning,piercing,and slashing damage from nonmagical attacks,charmed,frightened,Undead Resilience", false,
			[]string{"fire,poison||fire, poison", "bludgeoning,piercing,slashing|damage from nonmagical attacks|bludgeoning, piercing, and slashing damage from nonmagical attacks", "||Undead Resilience"},
			[]string{"charmed||charmed", "frightened||frightened"}},
		{"a form", "necrotic (in day form); radiant (in night form)", false,
			[]string{"necrotic|(in day form)|necrotic (in day form)", "radiant|(in night form)|radiant (in night form)"}, nil},
		{"escaped ampersand", "bludgeoning, piercing &amp; slashing from nonmagical attacks", false,
			[]string{"bludgeoning,piercing,slashing|from nonmagical attacks|bludgeoning, piercing & slashing from nonmagical attacks"}, nil},
		{"two lines run together", "psychic Condition Immunities blinded, prone", false,
			[]string{"psychic||psychic"}, []string{"blinded,prone||blinded, prone"}},
		{"a sentence", "The falseheart is vulnerable to radiant damage.", false, []string{"radiant||radiant"}, nil},
		{"none written as False", "False", false, []string{}, nil},
		{"conditions by other names", "fatigue, paralysis, poison, diseased", true,
			[]string{"exhaustion,paralyzed,poisoned||fatigue, paralysis, poison", "||diseased"}, nil},
		{"a condition's qualifier", "charmed (with mind blank)", true, []string{"charmed|(with mind blank)|charmed (with mind blank)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, moved := open5e.ReadDefenses(tt.line, tt.conditions)
			if g := entries(got); !slices.Equal(g, tt.want) {
				t.Errorf("entries\n got %q\nwant %q", g, tt.want)
			}
			if g := entries(moved); !slices.Equal(g, append([]string{}, tt.moved...)) {
				t.Errorf("conditions\n got %q\nwant %q", g, tt.moved)
			}
		})
	}
}

// lineWords are the words of a damage or condition line, lower-case.
func lineWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(html.UnescapeString(s)), func(r rune) bool { return r < 'a' || r > 'z' })
}

// qualifierWords are words that say when a defense holds: a line with
// one carries a qualifier.
var qualifierWords = map[string]bool{"from": true, "nonmagical": true, "nonmagic": true, "magical": true, "magic": true,
	"weapons": true, "weapon": true, "attacks": true, "attack": true, "silvered": true, "silver": true, "adamantine": true,
	"iron": true, "form": true, "while": true, "when": true, "except": true, "made": true}

// restructured are the lines whose words the entries keep only in part,
// and why.
var restructured = map[string]string{
	// "The falseheart is vulnerable to radiant damage.": the line's
	// type, without the sentence around it.
	"open5e_v2:tob-2023:creature:nichny": "a sentence",
	// "psychic Condition Immunities blinded, prone": two lines run
	// together, the second's label left out.
	"open5e_v2:tob2:creature:moderate-malleable": "a label",
}

// Every word of every creature's damage and condition lines, as the v2
// records print them beside their key lists, is in the entity's entries of
// that line (conditions a damage line names in its condition line): the
// qualifiers ("from nonmagical attacks not made with silvered weapons")
// among them. The records whose lines carry a qualifier, counted from the
// data, are listed by document.
func TestSnapshotEntities_qualifiersKept(t *testing.T) {
	lines := []struct {
		field   string
		entries func(*lkv1.CreatureDetails) []*lkv1.Defense
	}{
		{"damage_vulnerabilities", (*lkv1.CreatureDetails).GetDamageVulnerabilityEntries},
		{"damage_resistances", (*lkv1.CreatureDetails).GetDamageResistanceEntries},
		{"damage_immunities", (*lkv1.CreatureDetails).GetDamageImmunityEntries},
		{"condition_immunities", (*lkv1.CreatureDetails).GetConditionImmunityEntries},
	}
	qualified, kept := map[string]int{}, map[string]int{}
	for _, e := range snapshot(t) {
		c := e.GetCreature()
		if c == nil || e.GetDocument().GetSource() != lkv1.Source_SOURCE_OPEN5E_V2 {
			continue
		}
		var rec struct {
			RI map[string]any `json:"resistances_and_immunities"`
		}
		if err := json.Unmarshal(e.GetSourceRecord(), &rec); err != nil {
			t.Fatalf("%s: %v", e.GetKey(), err)
		}
		if restructured[e.GetKey()] != "" {
			continue
		}
		has, keptAll := false, true
		for _, l := range lines {
			display, _ := rec.RI[l.field+"_display"].(string)
			var text strings.Builder
			for _, d := range l.entries(c) {
				text.WriteString(d.GetText() + " ")
			}
			for _, d := range c.GetConditionImmunityEntries() {
				text.WriteString(d.GetText() + " ")
			}
			have := lineWords(text.String())
			for _, w := range lineWords(display) {
				if qualifierWords[w] {
					has = true
				}
				if !slices.Contains(have, w) {
					keptAll = false
					t.Errorf("%s: %s %q: the entries lack %q (entries %q)", e.GetKey(), l.field, display, w, entries(l.entries(c)))
				}
			}
		}
		if has {
			qualified[e.GetDocument().GetKey()]++
			if keptAll {
				kept[e.GetDocument().GetKey()]++
			}
		}
	}
	docs := make([]string, 0, len(qualified))
	total := 0
	for d, n := range qualified {
		docs = append(docs, d)
		total += n
	}
	sort.Strings(docs)
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "%s %d/%d, ", d, kept[d], qualified[d])
	}
	t.Logf("creature records whose lines carry a qualifier: %d; by document, kept/counted: %s", total, b.String())
	if total == 0 {
		t.Error("no creature line carries a qualifier: the records were not read")
	}
}

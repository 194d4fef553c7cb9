package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The shapes the whole catalogue brought, each checked against the
// entity's own source record: Level Up's Monstrous Menagerie (a5e, its
// commas lost upstream), Black Flag's class table, Vault of Magic's items,
// Spells That Don't Suck's higher-level text without casting options.

func snapshotEntity(t *testing.T, key string) *lkv1.Entity {
	t.Helper()
	for _, e := range snapshot(t) {
		if e.GetKey() == key {
			return e
		}
	}
	t.Fatalf("no entity %s in the snapshot", key)
	return nil
}

func card(p *lkv1.Entity) string {
	e := entityFromProto(p, "")
	return renderEntity(&e)
}

// wordGap is two spaces between words, where a5e-mm's records lost a comma;
// lostApostrophe a contraction written without its apostrophe, lost with them.
var lostApostrophe = regexp.MustCompile(`(?i)\b(doesnt|isnt|dont|hasnt|arent|cant|wasnt|didnt)\b`)

var wordGap = regexp.MustCompile(`[\p{L}\p{N})]  [\p{L}\p{N}]`)

func TestCards_monstrousMenagerie(t *testing.T) {
	ab := snapshotEntity(t, "open5e_v2:a5e-mm:creature:aboleth")
	c := card(ab)
	for _, want := range []string{
		"If the target is a creature, it makes a DC 16 Constitution saving throw. On a failure, it contracts",
		"### Legendary Actions",
		"(a5e-mm, open5e_v2, a5e)",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("aboleth card lacks %q:\n%s", want, c)
		}
	}
	n, gaps, contractions := 0, 0, 0
	for _, e := range snapshot(t) {
		if e.GetDocument().GetKey() != "a5e-mm" {
			continue
		}
		n++
		if e.GetDocument().GetGameSystem() != "a5e" {
			t.Errorf("%s: game system %q", e.GetKey(), e.GetDocument().GetGameSystem())
		}
		c := card(e)
		if g := wordGap.FindAllString(c, -1); len(g) > 0 {
			gaps += len(g)
			if gaps < 5 {
				t.Errorf("%s: a comma still lost: %q", e.GetKey(), g)
			}
		}
		if g := lostApostrophe.FindAllString(c, -1); len(g) > 0 {
			contractions += len(g)
			if contractions < 5 {
				t.Errorf("%s: a contraction without its apostrophe: %q", e.GetKey(), g)
			}
		}
	}
	if n == 0 || gaps > 0 || contractions > 0 {
		t.Errorf("%d a5e-mm cards, %d lost commas and %d lost apostrophes left", n, gaps, contractions)
	}
}

// classColumn reads a class record's table column by its feature key.
func classColumn(t *testing.T, e *lkv1.Entity, key string) map[int]string {
	t.Helper()
	var rec struct {
		Features []struct {
			Key  string
			Data []struct {
				Level int
				Value string `json:"column_value"`
			} `json:"data_for_class_table"`
		}
	}
	if err := json.Unmarshal(e.GetSourceRecord(), &rec); err != nil {
		t.Fatal(err)
	}
	for _, f := range rec.Features {
		if f.Key == key {
			out := map[int]string{}
			for _, d := range f.Data {
				out[d.Level] = d.Value
			}
			return out
		}
	}
	t.Fatalf("%s: no column %s in the record", e.GetKey(), key)
	return nil
}

// Black Flag's Mechanist names two columns "Augment Effects Known"; the
// second is keyed augmented-items and holds another count.
func TestCards_blackFlagClassTable(t *testing.T) {
	m := snapshotEntity(t, "open5e_v2:bfrd:class:mechanist")
	known := classColumn(t, m, "bfrd_mechanist_augment-effects-known")
	items := classColumn(t, m, "bfrd_mechanist_augmented-items")
	c := card(m)
	if !strings.Contains(c, "| Augment Effects Known | Augmented Items |") {
		t.Errorf("mechanist table header:\n%s", c)
	}
	for _, l := range []int{2, 5, 14} {
		row := fmt.Sprintf(" | %s | %s |\n", known[l], items[l])
		found := false
		for _, line := range strings.Split(c, "\n") {
			if strings.HasPrefix(line, "| "+ordinal(l)+" |") && strings.HasSuffix(line+"\n", row) {
				found = true
			}
		}
		if !found {
			t.Errorf("level %d: no row ending %q", l, row)
		}
	}
	fixed := false
	for _, co := range m.GetCorrections() {
		if co.GetField() == "class_table" && strings.Contains(co.GetCorrectedValue(), "Augmented Items") {
			fixed = true
		}
	}
	if !fixed || !strings.Contains(c, "Corrected from the source") {
		t.Errorf("the renamed column is not recorded and footnoted: %v", m.GetCorrections())
	}
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// Every Vault of Magic item's card says its category, rarity and
// attunement as its record does.
func TestCards_vaultOfMagic(t *testing.T) {
	n := 0
	for _, e := range snapshot(t) {
		if e.GetDocument().GetKey() != "vom" {
			continue
		}
		n++
		var rec struct {
			Category           struct{ Name string }
			Rarity             struct{ Name string }
			RequiresAttunement bool `json:"requires_attunement"`
		}
		if err := json.Unmarshal(e.GetSourceRecord(), &rec); err != nil {
			t.Fatal(err)
		}
		c := card(e)
		head := strings.SplitN(c, "\n", 3)[1]
		if !strings.Contains(strings.ToLower(head), strings.ToLower(rec.Rarity.Name)) || strings.Contains(head, "requires attunement") != rec.RequiresAttunement {
			t.Errorf("%s: card line %q; record: %s, %s, attunement %v", e.GetKey(), head, rec.Category.Name, rec.Rarity.Name, rec.RequiresAttunement)
		}
	}
	if n == 0 {
		t.Fatal("no Vault of Magic items")
	}
}

// Spells That Don't Suck gives 79 spells higher-level text and no casting
// options: the text is the answer, shown as the book shows it.
func TestCards_higherLevelWithoutCastingOptions(t *testing.T) {
	n := 0
	for _, e := range snapshot(t) {
		if e.GetKind() != lkv1.Kind_KIND_SPELL || e.GetDocument().GetSource() != lkv1.Source_SOURCE_OPEN5E_V2 {
			continue
		}
		var rec struct {
			HigherLevel    string            `json:"higher_level"`
			CastingOptions []json.RawMessage `json:"casting_options"`
		}
		if err := json.Unmarshal(e.GetSourceRecord(), &rec); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(rec.HigherLevel) == "" || len(rec.CastingOptions) > 0 {
			continue
		}
		n++
		text := strings.TrimSpace(strings.ReplaceAll(rec.HigherLevel, "\r\n", "\n"))
		if i := strings.Index(text, "<"); i >= 0 {
			// What follows is HTML, shown as markdown (TestNormalize_cleanTexts).
			text = strings.TrimSpace(text[:i])
		}
		c := card(e)
		if want := "***At Higher Levels.*** " + text; !strings.Contains(c, want) {
			t.Errorf("%s: card lacks %q", e.GetKey(), want)
		}
		if strings.Contains(c, "</") {
			t.Errorf("%s: card shows HTML", e.GetKey())
		}
	}
	if n == 0 {
		t.Fatal("no spell with higher-level text and no casting options")
	}
	t.Logf("%d spells with higher-level text and no casting options", n)
}

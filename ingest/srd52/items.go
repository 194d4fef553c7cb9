package srd52

import (
	"fmt"
	"regexp"
	"strings"
)

// MagicItem is a magic item as the Magic Items chapter prints it: its
// heading and the italic line under it, "*Weapon (Warhammer), Very Rare
// (Requires Attunement by a Dwarf ...)*".
type MagicItem struct {
	// Name is the heading: "Dwarven Thrower".
	Name string
	// Category is the line's first word or words: "Weapon", "Wondrous
	// Item"; Base what its parentheses say it is made from: "Warhammer",
	// "Any Simple or Martial"; empty when it has none.
	Category, Base string
	// Line is the heading's line in the file, from 1.
	Line int
}

const magicItemsFile = "10_MagicItems.md"

// itemLine is a magic item's line under its heading: a category, what it
// is made from in parentheses, then a comma and its rarity. The text runs
// a paragraph into it once (Belt of Dwarvenkind).
var itemLine = regexp.MustCompile(`^\*(Armor|Potion|Ring|Rod|Scroll|Staff|Wand|Weapon|Wondrous Item)(?: \(([^)]*)\))?, [^*]+\*`)

// magicItems reads every magic item of the chapter: the sections whose
// text opens with an item line.
func magicItems(c *Chapter) ([]*MagicItem, error) {
	var out []*MagicItem
	c.Walk(func(s *Section) {
		first, _, _ := strings.Cut(strings.TrimSpace(s.Text), "\n")
		if m := itemLine.FindStringSubmatch(first); m != nil {
			out = append(out, &MagicItem{Name: s.Name, Category: m[1], Base: m[2], Line: s.Line})
		}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no magic items (sections opening with a line such as *Weapon (Warhammer), Very Rare*)", c.File)
	}
	return out, nil
}

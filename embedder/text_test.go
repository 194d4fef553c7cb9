package embedder_test

import (
	"strings"
	"testing"

	"lorekeeper.dev/embedder"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestText(t *testing.T) {
	tests := []struct {
		name      string
		e         *lkv1.Entity
		lowercase bool
		want      []string // substrings, in this order
		not       []string
	}{
		{
			name: "spell: type line, description and higher levels",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_SPELL, Name: "Fireball",
				Description: "A bright streak flashes ... Each creature takes **8d6** fire damage.",
				HigherLevel: "The damage increases by 1d6.",
				Details:     &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 3, School: "evocation"}}},
			want: []string{"Fireball: 3rd-level evocation spell.", "A bright streak", "fire damage", "At higher levels: The damage increases by"},
			not:  []string{"8d6", "1d6", "**"},
		},
		{
			name: "cantrip, lower-cased",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_SPELL, Name: "Fire Bolt", Description: "You hurl a mote of fire.",
				Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 0, School: "evocation"}}},
			lowercase: true,
			want:      []string{"fire bolt: evocation cantrip.", "you hurl a mote of fire."},
		},
		{
			name: "creature: size, type, trait and action names, trait texts last, no numbers",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_CREATURE, Name: "Vampire",
				Details: &lkv1.Entity_Creature{Creature: &lkv1.CreatureDetails{Size: "medium", Type: "undead", Subtype: "shapechanger", ArmorClass: 16, HitPoints: 144}},
				Blocks: []*lkv1.TextBlock{
					{Type: "trait", Name: "Shapechanger", Text: "If the vampire isn't in sunlight..."},
					{Type: "trait", Name: "Regeneration", Text: "regains 20 hit points"},
					{Type: "action", Name: "Bite", Attack: "+9 to hit"},
					{Type: "legendary_action", Name: "Move"},
				}},
			want: []string{"Vampire: Medium undead (shapechanger).", "Traits: Shapechanger, Regeneration.", "Actions: Bite.", "Legendary actions: Move.", "If the vampire isn't in sunlight", "regains hit points"},
			not:  []string{"144", "16", "+9", "20"},
		},
		{
			name: "weapon: properties",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_WEAPON, Name: "Longbow",
				Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "weapon", Weapon: &lkv1.WeaponStats{
					DamageDice: "1d8", DamageType: "piercing", Properties: []string{"ammunition", "heavy", "two-handed"}, IsRanged: true}}}},
			want: []string{"Longbow: Martial ranged weapon.", "Deals piercing damage.", "Properties: ammunition, heavy, two-handed."},
			not:  []string{"1d8"},
		},
		{
			name: "magic item: rarity and attunement",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: "Cloak of Elvenkind", Description: "While you wear this cloak...",
				Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "wondrous-item", IsMagic: true, Rarity: "uncommon", RequiresAttunement: true}}},
			want: []string{"Cloak of Elvenkind: Magic uncommon wondrous item, requires attunement.", "While you wear"},
		},
		{
			name: "magic weapon: what it is made from",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: "Dwarven Thrower", Description: "the weapon flies back to your hand",
				Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "weapon", IsMagic: true, Rarity: "very rare", Base: "warhammer",
					Weapon: &lkv1.WeaponStats{DamageType: "bludgeoning"}}}},
			want: []string{"Dwarven Thrower: Magic very rare martial melee weapon (warhammer).", "flies back"},
		},
		{
			name: "class with no description: its features",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_CLASS, Name: "Barbarian",
				Blocks: []*lkv1.TextBlock{{Type: "feature", Name: "Rage", Level: 1}, {Type: "feature", Name: "Unarmored Defense"}, {Type: "feature", Name: "Rage"}}},
			want: []string{"Barbarian: class.", "Features: Rage, Unarmored Defense."},
		},
		{
			name: "feat: benefits",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_FEAT, Name: "Sharpshooter",
				Details: &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}},
				Blocks:  []*lkv1.TextBlock{{Type: "benefit", Text: "Attacking at long range doesn't impose disadvantage."}}},
			want: []string{"Sharpshooter: feat.", "long range"},
		},
		{
			name: "rule: section",
			e: &lkv1.Entity{Kind: lkv1.Kind_KIND_RULE, Name: "Opportunity Attacks", Description: "You can make an opportunity attack when...",
				Details: &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{Section: "combat", SectionName: "Combat"}}},
			want: []string{"Opportunity Attacks: Combat rule.", "opportunity attack when"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := embedder.Text(tt.e, tt.lowercase)
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Text = %q\nwant %q in it (after the previous parts)", got, w)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("Text = %q\nhas %q, want it left out", got, n)
				}
			}
			if tt.lowercase && got != strings.ToLower(got) {
				t.Errorf("Text = %q, want it lower-cased", got)
			}
		})
	}
}

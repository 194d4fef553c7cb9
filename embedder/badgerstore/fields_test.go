package badgerstore_test

import (
	"slices"
	"testing"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// TestEntityFields_healing: a spell heals when it has a healing roll or
// its text says it restores hit points, not when it says they cannot be.
func TestEntityFields_healing(t *testing.T) {
	tests := []struct {
		name, roll, desc string
		want             bool
	}{
		{"Cure Wounds", "1d8", "A creature you touch regains a number of hit points equal to 1d8 + your spellcasting ability modifier.", true},
		{"Heal", "", "Choose a creature that you can see within range. A surge of positive energy washes through the creature, causing it to regain 70 hit points.", true},
		{"Mass Heal", "", "A flood of healing energy flows from you into creatures around you. You restore up to 700 Hit Points, divided as you choose.", true},
		{"Power Word Heal", "", "A wave of healing energy washes over the creature you touch. The target regains all its Hit Points.", true},
		{"Goodberry", "", "A creature can take a Bonus Action to eat one berry. Eating a berry restores 1 Hit Point.", true},
		{"Chill Touch", "", "On a hit, the target takes 1d8 necrotic damage, and it can't regain hit points until the start of your next turn.", false},
		{"Spectral Champion", "", "Any creature that takes this damage can’t regain hit points until the start of your next turn.", false},
		{"Defile Healing", "", "The next time the target is healed, the healing restores no hit points.", false},
		{"Fireball", "", "Each creature takes 8d6 fire damage on a failed save.", false},
	}
	for _, tt := range tests {
		e := &lkv1.Entity{Kind: lkv1.Kind_KIND_SPELL, Name: tt.name, Description: tt.desc,
			Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{HealingRoll: tt.roll}}}
		got, ok := badgerstore.EntityFields(e).Bools[badgerstore.FieldHealing]
		if !ok || got != tt.want {
			t.Errorf("%s: healing %v (set %v), want %v", tt.name, got, ok, tt.want)
		}
	}
}

// TestEntityFields_itemDamage: an item deals its weapon's damage type and
// the types its text rolls (damage_dealt), not those it only names.
func TestEntityFields_itemDamage(t *testing.T) {
	tests := []struct {
		name, weaponType, desc string
		dealt                  []string
	}{
		{"Flame Tongue (Longsword)", "slashing", "While the sword is ablaze, it deals an extra 2d6 fire damage to any target it hits.", []string{"fire"}},
		{"Javelin of Lightning", "piercing", "Each creature in the line takes 4d6 lightning damage on a failed save.", []string{"lightning"}},
		{"Mace of Disruption", "bludgeoning", "it takes an extra 2d6 radiant damage. If the target has 25 hit points", []string{"radiant"}},
		{"Dragon's Breath", "", "a 15-foot cone: each creature takes 7 (2d6) cold damage", []string{"cold"}},
		{"Vicious Weapon", "slashing", "it deals an extra 2d6 damage to the target.", nil},
		{"Ring of Resistance", "", "You have resistance to fire damage while wearing this ring.", nil},
		{"Frost Brand", "slashing", "You have resistance to fire damage. It deals an extra 1d6 cold damage.", []string{"cold"}},
	}
	for _, tt := range tests {
		it := &lkv1.ItemDetails{IsMagic: true}
		if tt.weaponType != "" {
			it.Weapon = &lkv1.WeaponStats{DamageType: tt.weaponType}
		}
		e := &lkv1.Entity{Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: tt.name, Description: tt.desc, Details: &lkv1.Entity_Item{Item: it}}
		kw := badgerstore.EntityFields(e).Keywords
		if got := kw[badgerstore.FieldDamageDealt]; !slices.Equal(got, tt.dealt) {
			t.Errorf("%s: damage dealt %q, want %q", tt.name, got, tt.dealt)
		}
		if got, want := kw[badgerstore.FieldDamageType], []string{tt.weaponType}; tt.weaponType != "" && !slices.Equal(got, want) {
			t.Errorf("%s: damage type %q, want the weapon's %q", tt.name, got, want)
		}
	}
}

package badgerstore_test

import (
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

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

// TestEntityFields_effects: what an item's or an option's text says it
// does (effects.go), as facets: conditions inflicted, ended and warded
// off, damage protected from, effects; and what it must not read.
func TestEntityFields_effects(t *testing.T) {
	tests := []struct {
		name, desc string
		want       map[string][]string // field -> values; a field absent: none
	}{
		{"Wand of Paralysis", "The target must succeed on a DC 15 Constitution saving throw or be paralyzed for 1 minute.",
			map[string][]string{badgerstore.FieldConditionInflicted: {"paralyzed"}, badgerstore.FieldEffect: {badgerstore.EffectImmobilize}}},
		{"Periapt of Proof against Poison", "You can't be poisoned while you wear this pendant. You are immune to poison damage.",
			map[string][]string{badgerstore.FieldProtection: {"poisoned", "poison"}}},
		{"Potion of Vitality", "When you drink this potion, it removes any exhaustion you are suffering and cures any disease or poison affecting you.",
			map[string][]string{badgerstore.FieldConditionEnded: {"exhaustion", "disease", "poisoned"}}},
		{"Boots of Striding", "If you are prone, you can stand up using only 5 feet of movement.", nil},
		{"Healing Draught", "If the creature has the Prone condition, it can use its Reaction to stand up.", nil},
		{"Net of Binding", "A creature that is restrained by the net can use its action to escape.", nil},
		{"Staff of Frost", "On a failed save, the target is restrained by ice until the end of your next turn.",
			map[string][]string{badgerstore.FieldConditionInflicted: {"restrained"}, badgerstore.FieldEffect: {badgerstore.EffectImmobilize}}},
		{"Tidal Charm", "If it fails the check, it can't move until the start of your next turn.",
			map[string][]string{badgerstore.FieldEffect: {badgerstore.EffectImmobilize}}},
		{"Star Stone", "A creature that fails falls prone and becomes incapacitated and unable to move.",
			map[string][]string{badgerstore.FieldConditionInflicted: {"prone", "incapacitated"}, badgerstore.FieldEffect: {badgerstore.EffectImmobilize}}},
		// Not movement the entity stops: its own target's aftermath, its
		// wielder, a distance it keeps.
		{"Potion of Haste", "When the spell ends, the target can't move or take actions until after its next turn.", nil},
		{"Orb of Holding", "You can't move the creature more than 60 feet away from the orb.", nil},
		{"Floating Disk", "The disk can't move across a 10-foot-deep pit.", nil},
		// Seeing from afar: a sensor, another's eyes; not hiding from it.
		{"Clairvoyance", "You create an invisible sensor within range in a location familiar to you.",
			map[string][]string{badgerstore.FieldEffect: {badgerstore.EffectScry}}},
		{"Find Familiar", "As an action, you can see through your familiar's eyes and hear what it hears.",
			map[string][]string{badgerstore.FieldEffect: {badgerstore.EffectScry}}},
		{"Arcane Eye", "You mentally receive visual information from the eye.",
			map[string][]string{badgerstore.FieldEffect: {badgerstore.EffectScry}}},
		{"Nondetection", "The target can't be targeted by any divination magic or perceived through magical scrying sensors.", nil},
	}
	fields := []string{badgerstore.FieldConditionInflicted, badgerstore.FieldConditionEnded, badgerstore.FieldProtection, badgerstore.FieldEffect}
	for _, tt := range tests {
		e := &lkv1.Entity{Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: tt.name, Description: tt.desc,
			Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{IsMagic: true}}}
		kw := badgerstore.EntityFields(e).Keywords
		for _, f := range fields {
			got, want := slices.Sorted(slices.Values(kw[f])), slices.Sorted(slices.Values(tt.want[f]))
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s %q, want %q", tt.name, f, got, want)
			}
		}
	}
}

// TestEntityFields_typedConditions: the conditions ingestion read into an
// Open5e spell's field are its conditions inflicted, none when it read
// none; its text is not read a second time, by other rules.
func TestEntityFields_typedConditions(t *testing.T) {
	text := "The target regains all its Hit Points. If the creature has the Prone condition, it can use its Reaction to stand up."
	for _, tt := range []struct {
		source lkv1.Source
		typed  []string
		want   []string
	}{
		{lkv1.Source_SOURCE_OPEN5E_V2, nil, nil},
		{lkv1.Source_SOURCE_OPEN5E_V2, []string{"charmed"}, []string{"charmed"}},
		{lkv1.Source_SOURCE_ORCBREW, nil, nil},
	} {
		e := &lkv1.Entity{Kind: lkv1.Kind_KIND_SPELL, Name: "Power Word Heal", Description: text,
			Document: &lkv1.Document{Key: "book", Source: tt.source},
			Details:  &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Conditions: tt.typed}}}
		if got := badgerstore.EntityFields(e).Keywords[badgerstore.FieldConditionInflicted]; !slices.Equal(got, tt.want) {
			t.Errorf("%s spell with conditions %q: inflicted %q, want %q", tt.source, tt.typed, got, tt.want)
		}
	}
}

package query_test

// spellSwitchReads: concentration, ritual, healing.
var spellSwitchReads = []readCase{
	{"lookup_spell", "a concentration spell I can cast as a bonus action", []string{"concentration=true"}},
	{"lookup_spell", "ritual from the evocation school", []string{"ritual=true"}},
	{"lookup_spell", "2024 rituals", []string{"ritual=true"}},
	{"lookup_spell", "healing spells for a cleric", []string{"healing=true"}},
	{"lookup_spell", "a necromancy spell that does not heal", []string{"healing=false"}},
	{"lookup_spell", "how does concentration work", []string{"concentration=true"}},
	{"search_dnd_content", "concentration spells that work underwater", []string{"concentration=true"}},
	// A name, a rules question, kinds without the field.
	{"lookup_spell", "what does healing word do", nil},
	{"search_dnd_content", "how does concentration work", nil},
	{"lookup_rule", "concentration", nil},
}

// equipmentSwitchReads: stealth, ranged or melee, simple or martial,
// one-handed, versatile.
var equipmentSwitchReads = []readCase{
	{"lookup_equipment", "medium armor with no stealth disadvantage", []string{"stealth_disadvantage=false"}},
	{"lookup_equipment", "best medium armor that won't ruin my stealth rolls", []string{"stealth_disadvantage=false"}},
	{"lookup_equipment", "one-handed weapon with reach", []string{"property=!two-handed"}},
	{"lookup_equipment", "simple ranged weapon", []string{"is_simple=true", "ranged=true"}},
	{"lookup_equipment", "a sword I can swing with one or two hands", []string{"property=versatile"}},
	{"lookup_equipment", "heavy armor with stealth disadvantage", []string{"stealth_disadvantage=true"}},
	// Not of weapons: spells, a simple question, one of many.
	{"lookup_spell", "ranged spell attack", nil},
	{"search_dnd_content", "a simple question about rules", nil},
	{"lookup_equipment", "one ring to rule them all", nil},
}

// legendaryReads: legendary of a creature.
var legendaryReads = []readCase{
	{"search_dnd_content", "monsters with legendary actions CR 10 or lower", []string{"legendary=true"}},
	{"lookup_creature", "a legendary dragon", []string{"legendary=true"}},
	{"lookup_creature", "legendary resistance", []string{"legendary=true"}},
	{"lookup_creature", "no legendary actions", []string{"legendary=false"}},
	// An item's rarity (valueReader's).
	{"lookup_equipment", "legendary sword", nil},
	{"lookup_equipment", "legendary dragon scale armor", nil},
}

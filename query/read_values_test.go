package query_test

// valueReads: the catalogue's own values.
var valueReads = []readCase{
	{"lookup_creature", "challenge rating 5 monstrosity", []string{"creature_type=monstrosity"}},
	{"lookup_spell", "3rd-level wizard spell that deals fire damage", []string{"class=wizard"}},
	{"lookup_spell", "a concentration spell I can cast as a bonus action", []string{"casting_time=bonus-action"}},
	{"lookup_spell", "ritual from the evocation school", []string{"school=evocation"}},
	{"lookup_creature", "a Large undead", []string{"size=large", "creature_type=undead"}},
	{"lookup_equipment", "medium armor with no stealth disadvantage", []string{"armor_category=medium", "category=armor"}},
	{"lookup_equipment", "two-handed finesse weapons", []string{"property=two-handed", "property=finesse", "category=weapon"}},
	{"lookup_equipment", "a light weapon", []string{"property=light", "category=weapon"}},
	{"lookup_equipment", "a two-handed sword", []string{"property=two-handed"}},
	{"lookup_equipment", "light and finesse", []string{"armor_category=light", "property=light", "property=finesse"}},
	{"lookup_equipment", "legendary sword", []string{"rarity=legendary"}},
	{"lookup_creature", "flying undead", []string{"movement=fly", "creature_type=undead"}},
	{"lookup_creature", "burrowing beasts", []string{"movement=burrow", "creature_type=beast"}},
	{"search_dnd_content", "a poison that paralyzes", []string{"category=poison"}},
	{"lookup_spell", "a necromancy spell that does not heal", []string{"school=necromancy"}},
	// A size before no creature, a type or a movement inside a creature's
	// name, a property said of no equipment, a name the question is.
	{"lookup_equipment", "a cheap light source", nil},
	{"lookup_spell", "scatter a large group of enemies", nil},
	{"lookup_creature", "giant rat", nil},
	{"lookup_spell", "a spell to fly", nil},
	{"search_dnd_content", "how does two-weapon fighting work", nil},
	{"search_dnd_content", "destroy undead", nil},
	{"search_dnd_content", "what does the poisoned condition do", nil},
	{"search_dnd_content", "how does concentration work", nil},
}

// kindReads: the one kind a search's question names.
var kindReads = []readCase{
	{"search_dnd_content", "monsters with legendary actions CR 10 or lower", []string{"entity_type=creature"}},
	{"search_dnd_content", "feats for a spellcaster", []string{"entity_type=feat"}},
	{"search_dnd_content", "concentration spells that work underwater", []string{"entity_type=spell"}},
	// A singular is said of something else; two kinds are both asked;
	// a lookup of one kind reads none.
	{"search_dnd_content", "a spell that lets a creature fly", nil},
	{"search_dnd_content", "spells and magic items for healing", nil},
	{"lookup_spell", "fire spells", nil},
	{"search_dnd_content", "how do beast spells work", nil},
}

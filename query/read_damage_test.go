package query_test

// damageReads: damage dealt, and a creature's defences.
var damageReads = []readCase{
	{"lookup_spell", "3rd-level wizard spell that deals fire damage", []string{"damage_type=fire"}},
	{"lookup_spell", "fire spells a 5th level wizard can cast", []string{"damage_type=fire"}},
	{"lookup_spell", "cold cantrips", []string{"damage_type=cold"}},
	{"lookup_equipment", "piercing weapons", []string{"damage_type=piercing"}},
	{"lookup_creature", "fiend immune to fire", []string{"damage_immunity=fire"}},
	{"lookup_creature", "monsters weak to fire", []string{"damage_vulnerability=fire"}},
	{"lookup_creature", "undead with a weakness to radiant damage", []string{"damage_vulnerability=radiant"}},
	{"lookup_creature", "cold resistance", []string{"damage_resistance=cold"}},
	// What protects from a type: a resistance granted, not the type dealt.
	{"lookup_spell", "protect yourself from fire damage", []string{"protection=fire"}},
	{"search_dnd_content", "protect the party from fire damage", []string{"protection=fire"}},
	// A type alone is no damage said; a rule is asked of, not filtered.
	{"lookup_spell", "fire", nil},
	{"search_dnd_content", "how does fire damage work", nil},
	{"lookup_spell", "a spell against fire elementals", nil},
}

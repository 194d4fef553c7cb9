package query_test

// levelReads: a spell's level, and a character's level as the spells it
// reaches.
var levelReads = []readCase{
	{"lookup_spell", "firbolt cantrip", []string{"level=0"}},
	{"lookup_spell", "3rd-level wizard spell that deals fire damage", []string{"level=3"}},
	{"lookup_spell", "3rd level or lower evocation", []string{"level_max=3"}},
	{"lookup_spell", "level 3 or higher necromancy", []string{"level_min=3"}},
	{"lookup_spell", "healing up to 2nd level", []string{"level_max=2"}},
	{"lookup_spell", "5th level wizard spells", []string{"level=5"}},
	{"lookup_spell", "wizard spells at 3rd level", []string{"level=3"}},
	{"lookup_spell", "cold cantrips", []string{"level=0"}},
	{"lookup_spell", "SRD 5.1 cantrips", []string{"level=0"}},
	// A character's level: the spells it reaches, by the class's caster type.
	{"lookup_spell", "fire spells a 5th level wizard can cast", []string{"level_max=3"}},
	{"lookup_spell", "healing for my level 5 paladin", []string{"level_max=2"}},
	{"lookup_spell", "best spells for an 11th level warlock", []string{"level_max=5"}},
	// Not a spell's level: a 1st-level ranger casts none, a slot of a
	// named spell, a party's, "level 3" alone, a creature's.
	{"lookup_spell", "spells for a 1st level ranger", nil},
	{"lookup_spell", "how much damage does fireball do at 5th level", nil},
	{"lookup_spell", "cure wounds at level 3", nil},
	{"lookup_spell", "spells for a level 5 party", nil},
	{"lookup_spell", "level 3", nil},
	{"lookup_creature", "a 5th level dragon", nil},
}

package query_test

// crReads: challenge ratings exact, bounded and ranged.
var crReads = []readCase{
	{"lookup_creature", "CR 1/2 hyena-headed raiders", []string{"challenge_rating=1/2"}},
	{"lookup_creature", "challenge rating 5 monstrosity", []string{"challenge_rating=5"}},
	{"lookup_creature", "CR 3 monster that can fly", []string{"challenge_rating=3"}},
	{"lookup_creature", "undead under CR 1", []string{"cr_max=1/2"}},
	{"lookup_creature", "a fiend of at least CR 5", []string{"cr_min=5"}},
	{"lookup_creature", "CR 5 to 10 dragons", []string{"cr_min=5", "cr_max=10"}},
	{"lookup_creature", "no more than CR 4", []string{"cr_max=4"}},
	{"lookup_creature", "fiends above CR 20", []string{"cr_min=21"}},
	{"search_dnd_content", "monsters with legendary actions CR 10 or lower", []string{"cr_max=10"}},
	{"search_dnd_content", "CR 5 undead from the SRD", []string{"challenge_rating=5"}},
	// Nothing below CR 0; no challenge rating of spells; a party's level
	// is partyReader's.
	{"lookup_creature", "beasts below CR 0", nil},
	{"lookup_spell", "CR 5 fire spells", nil},
	{"lookup_creature", "a boss for my 5th level party", nil},
	{"lookup_creature", "a creature with a challenge", nil},
}

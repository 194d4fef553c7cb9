package query_test

// partyReads: a party's level as the challenge rating it can take.
var partyReads = []readCase{
	{"lookup_creature", "something I can throw at level 8 players", []string{"cr_max=8"}},
	{"lookup_creature", "undead horde for a level 3 party in a crypt", []string{"cr_max=3"}},
	{"lookup_creature", "a boss for my 5th level party", []string{"cr_max=5"}},
	{"lookup_creature", "the weakest giant for my level 5 party", []string{"cr_max=5"}},
	// Not a party's: a character's class, a spell's level; no challenge
	// rating of spells.
	{"lookup_creature", "level 5 wizard", nil},
	{"lookup_spell", "healing for my level 5 paladin", nil},
	{"lookup_spell", "spells for a level 5 party", nil},
	{"lookup_creature", "a level 25 party", nil},
	{"lookup_creature", "a flying mount for a level 5 party", []string{"cr_max=5"}},
}

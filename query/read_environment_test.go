package query_test

// environmentReads: where a creature lives.
var environmentReads = []readCase{
	{"lookup_creature", "monsters that live in swamps CR 2 to 4", []string{"environment=swamp-or-marsh"}},
	{"lookup_creature", "something from the underdark", []string{"environment=underworld"}},
	{"lookup_creature", "forest predators", []string{"environment=forest-or-jungle"}},
	{"lookup_creature", "a creature of the astral plane", []string{"environment=astral-plane"}},
	{"search_dnd_content", "desert monsters", []string{"environment=desert"}},
	// Spells live nowhere; a word the environments share with damage or
	// components; no place said.
	{"lookup_spell", "a spell for the desert", nil},
	{"lookup_creature", "a creature made of fire", nil},
	{"lookup_creature", "a big scary dragon", nil},
	{"lookup_creature", "swarm of piranha-like fish in a jungle river", nil},
	{"lookup_creature", "undead horde for a level 3 party in a crypt", nil},
}

package query_test

// bookReads: books by name, initials, homebrew.
var bookReads = []readCase{
	{"search_dnd_content", "CR 5 undead from the SRD", []string{"docs=srd-2014,srd-2024"}},
	{"search_dnd_content", "Tome of Beasts dragons", []string{"docs=tob"}},
	{"lookup_creature", "beasts from Level Up", []string{"docs=a5e"}},
	{"lookup_spell", "SRD 5.1 cantrips", []string{"docs=srd-2014,srd-2024"}},
	// A word of a name is no name; a stop word is no initials.
	{"lookup_creature", "a tome", nil},
	{"lookup_spell", "level up my fireball", []string{"docs=a5e"}},
	{"lookup_spell", "the deep end", nil},
	{"lookup_creature", "beasts of the tome", nil},
}

// editionReads: a version or a game system's year.
var editionReads = []readCase{
	{"lookup_spell", "2024 rituals", []string{"docs=srd-2024"}},
	{"lookup_spell", "SRD 5.1 cantrips", []string{"docs=srd-2014"}},
	{"search_dnd_content", "how does the magic work in 2024", []string{"docs=srd-2024"}},
	// Other numbers are no edition.
	{"lookup_spell", "a spell for 2025", nil},
	{"lookup_creature", "CR 5.5", nil},
}

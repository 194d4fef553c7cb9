package query_test

// sizeReads: a size as a table says it.
var sizeReads = []readCase{
	{"lookup_creature", "sea monster big enough to sink a ship", []string{"size=large", "size=huge", "size=gargantuan"}},
	{"lookup_creature", "a big monster for a level 10 party", []string{"size=large", "size=huge", "size=gargantuan"}},
	{"lookup_creature", "an enormous beast that lives in the mountains", []string{"size=large", "size=huge", "size=gargantuan"}},
	{"lookup_creature", "a massive dragon", []string{"size=large", "size=huge", "size=gargantuan"}},
	{"lookup_creature", "a little creature that steals things", []string{"size=tiny", "size=small"}},
	// Not the creature's size.
	{"lookup_creature", "how big is a tarrasque", nil},
	{"lookup_creature", "a big group of goblins", nil},
	{"lookup_spell", "a spell that does big damage", nil},
	{"lookup_creature", "monster too big to fit through a door", nil},
	// The stat block's words are valueReader's.
	{"lookup_creature", "a Huge undead", nil},
}

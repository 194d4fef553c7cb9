package query_test

// companionReads: a mount is Large or larger.
var companionReads = []readCase{
	{"lookup_creature", "a flying mount for a level 5 party", []string{"size=large", "size=huge", "size=gargantuan"}},
	{"lookup_creature", "a steed for my paladin", []string{"size=large", "size=huge", "size=gargantuan"}},
	// A size said wins; a familiar has no size; spells have none.
	{"lookup_creature", "a Huge mount", nil},
	{"lookup_creature", "a familiar for my wizard", nil},
	{"lookup_spell", "summon a horse-like mount", nil},
}

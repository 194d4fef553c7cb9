package query_test

// effectReads: what a question wants done, as the texts say it.
var effectReads = []readCase{
	{"lookup_spell", "stop enemies from moving", []string{"effect=immobilize"}},
	{"search_dnd_content", "spells that restrain or immobilize enemies", []string{"effect=immobilize"}},
	{"lookup_spell", "a spell to keep them from escaping", []string{"effect=immobilize"}},
	{"lookup_spell", "bog down a group of enemies: half speed, fewer attacks, worse AC", []string{"effect=slow"}},
	{"search_dnd_content", "cheap light source for a dungeon", []string{"effect=light"}},
	{"lookup_spell", "a spell to talk to the dead", []string{"effect=talk-dead"}},
	{"lookup_spell", "speak with animals", []string{"effect=talk-beasts"}},
	{"search_dnd_content", "a cheap way to cross a chasm", []string{"effect=climb", "effect=jump", "effect=fly"}},
	{"lookup_spell", "magic so I can scale the tower wall without any rope", []string{"effect=climb"}},
	{"lookup_equipment", "boots that let me walk on walls", []string{"effect=climb"}},
	{"lookup_equipment", "walking upside down on the ceiling", []string{"effect=climb"}},
	{"lookup_spell", "my monk needs to leap across a 30-foot chasm", []string{"effect=jump"}},
	{"lookup_spell", "a spell to fly", []string{"effect=fly"}},
	{"search_dnd_content", "a spell that lets a creature fly", []string{"effect=fly"}},
	{"lookup_equipment", "let me breathe underwater", []string{"effect=swim"}},
	{"lookup_spell", "teleport the whole group to a place I know well", []string{"effect=teleport"}},
	{"lookup_spell", "summon a creature to fight for me", []string{"effect=summon"}},
	{"lookup_spell", "a spell to detect invisible creatures", []string{"effect=detect"}},
	{"lookup_creature", "land shark monstr that bursts up out of the ground", []string{"movement=burrow"}},
	{"lookup_creature", "something that tunnels under the city", []string{"movement=burrow"}},
	{"lookup_creature", "a horse with wings", []string{"movement=fly"}},
	{"lookup_equipment", "boots with little wings", []string{"effect=fly"}},
	{"search_dnd_content", "a spell to give me wings", []string{"movement=fly", "effect=fly"}},
	// Light said of equipment, a creature's own flying, a question with
	// no effect, a rule's name.
	{"lookup_equipment", "a light crossbow", nil},
	{"lookup_creature", "flying undead", nil},
	{"lookup_spell", "hurl a bead of fire that explodes", nil},
	{"lookup_rule", "how does jumping work", nil},
	{"lookup_spell", "stop a spell", nil},
	{"lookup_creature", "a monster that walks through walls", nil},
	{"lookup_equipment", "a rune carved on the wall", nil},
	{"lookup_spell", "dig a tunnel", nil},
}

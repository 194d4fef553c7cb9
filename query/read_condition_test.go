package query_test

// conditionReads: conditions inflicted, ended and warded off.
var conditionReads = []readCase{
	{"lookup_spell", "paralyze a humanoid so it cannot move", []string{"condition_inflicted=paralyzed"}},
	{"search_dnd_content", "a poison that paralyzes", []string{"condition_inflicted=paralyzed"}},
	{"search_dnd_content", "spells that restrain or immobilize enemies", []string{"condition_inflicted=restrained"}},
	{"lookup_creature", "a gaze that turns people to stone", []string{"condition_inflicted=petrified"}},
	{"lookup_spell", "knock them prone", []string{"condition_inflicted=prone"}},
	{"lookup_spell", "undo petrification, turn a stone statue back to flesh", []string{"condition_ended=petrified"}},
	{"lookup_spell", "our rogue got turned to stone by a basilisk, how do we fix him", []string{"condition_ended=petrified"}},
	{"lookup_spell", "cure poison", []string{"condition_ended=poisoned"}},
	{"lookup_equipment", "remove a curse", []string{"condition_ended=curse"}},
	{"search_dnd_content", "defence against mind control", []string{"protection=charmed"}},
	{"lookup_spell", "protection from fear", []string{"protection=frightened"}},
	// A cursed thing is no curse lifted; a rule or a condition asked of
	// by name; kinds without the fields; no condition.
	{"lookup_equipment", "a cursed sword", nil},
	{"search_dnd_content", "what does the poisoned condition do", nil},
	{"lookup_rule", "paralyzed", nil},
	{"search_dnd_content", "how does grappling work", nil},
	{"lookup_spell", "poison spray damage", nil},
	{"lookup_spell", "a spell to stop enemies", nil},
	{"lookup_spell", "is this wine poisoned? I need a spell to find out", nil},
	{"lookup_spell", "a spell that leaves them paralyzed", []string{"condition_inflicted=paralyzed"}},
}

package query_test

// superlativeReads: superlatives, and a party's level as the fairest
// fights first.
var superlativeReads = []readCase{
	{"lookup_equipment", "best medium armor that won't ruin my stealth rolls", []string{"order=armor_class desc"}},
	{"lookup_equipment", "bow with the longest range", []string{"order=range desc"}},
	{"lookup_equipment", "the cheapest heavy armor", []string{"order=cost_gp asc"}},
	{"lookup_creature", "the strongest dragon", []string{"order=challenge_rating desc"}},
	{"lookup_creature", "undead with the most hit points", []string{"order=hit_points desc"}},
	{"lookup_creature", "a big dumb giant for my party, the weakest kind of giant", []string{"order=challenge_rating asc"}},
	{"lookup_creature", "something I can throw at level 8 players", []string{"order=challenge_rating desc"}},
	{"lookup_creature", "the weakest giant for my level 5 party", []string{"order=challenge_rating asc"}},
	{"lookup_creature", "weak undead for level 1 characters", []string{"order=challenge_rating asc"}},
	{"lookup_creature", "an easy fight for new players", []string{"order=challenge_rating asc"}},
	{"lookup_creature", "undead weak to sunlight", nil},
	{"lookup_equipment", "a bow with long range", []string{"order=range desc"}},
	{"lookup_equipment", "armor with the highest AC", []string{"order=armor_class desc"}},
	// "Best" is the highest armor class of armor only; kinds without the
	// field; a rules question.
	{"lookup_equipment", "best weapon for a rogue", nil},
	{"lookup_creature", "the best dragon for my party", nil},
	{"lookup_spell", "the strongest reach", nil},
	{"search_dnd_content", "how does the longest rest work", nil},
	{"lookup_creature", "a flying mount for a level 5 party", nil},
}

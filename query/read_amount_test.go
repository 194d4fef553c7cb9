package query_test

// amountReads: a price or a weight compared.
var amountReads = []readCase{
	{"lookup_equipment", "a weapon under 10 gp", []string{"cost_max=10"}},
	{"lookup_equipment", "armor lighter than 20 lb", []string{"weight_max=20"}},
	{"lookup_equipment", "gear of 5 sp or less", []string{"cost_max=0.5"}},
	{"lookup_equipment", "at least 100 gold", []string{"cost_min=100"}},
	{"search_dnd_content", "cheap light source for a dungeon", []string{"cost_max=50"}},
	{"lookup_equipment", "the cheapest heavy armor", nil},
	// An amount alone is no bound; spells have no price.
	{"lookup_equipment", "a 50 gp gem", nil},
	{"lookup_spell", "a spell under 10 gp", nil},
}

package query_test

// howItWorksReads: questions about how the game works ask for the rules.
var howItWorksReads = []readCase{
	{"search_dnd_content", "how does concentration work", ruleKinds()},
	{"search_dnd_content", "what does advantage mean", ruleKinds()},
	{"search_dnd_content", "rules for ranged attacks in melee", ruleKinds()},
	{"search_dnd_content", "how long does it take to don heavy armor", ruleKinds()},
	{"search_dnd_content", "how long will it take to stabilize a dying creature", ruleKinds()},
	{"search_dnd_content", "what happens when a Large creature drops to 0 hit points", ruleKinds()},
	{"search_dnd_content", "how does the magic work in 2024", ruleKinds()},
	{"search_dnd_content", "can I cast two spells in one turn", ruleKinds()},
	{"search_dnd_content", "wat happens when ur stunned", ruleKinds()},
	// What a rule's name means.
	{"search_dnd_content", "what is a bonus action", ruleKinds()},
	{"search_dnd_content", "what are opportunity attacks", ruleKinds()},
	{"search_dnd_content", "what's a saving throw", ruleKinds()},
	// A name something else bears, a lookup of rules or spells alone, no
	// such question.
	{"search_dnd_content", "how do spell slots work", nil},
	{"search_dnd_content", "how does sneak attack work", nil},
	{"lookup_spell", "how does concentration work", nil},
	{"lookup_rule", "how does concentration work", nil},
	{"search_dnd_content", "what happens to fire elementals", nil},
	{"lookup_rule", "what happens when I fall", nil},
	{"search_dnd_content", "what is a lich", nil},
	{"search_dnd_content", "what is the best spell for a bonus action", nil},
}

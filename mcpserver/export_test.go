package mcpserver

// EncounterBudget is encounterBudget, for the black-box tests.
var EncounterBudget = encounterBudget

// ParseLevels is parseLevels, for the fuzz test.
var ParseLevels = parseLevels

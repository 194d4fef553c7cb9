package mcpserver

// EncounterBudget is encounterBudget, for the black-box tests.
var EncounterBudget = encounterBudget

package open5e

import lkv1 "lorekeeper.dev/proto/lorekeeper/v1"

// PlainHyphens is plainHyphens, for the external tests.
var PlainHyphens = plainHyphens

// MendRunOns is mendRunOns, for the external tests.
var MendRunOns = mendRunOns

// RestoreApostrophes is restoreApostrophes, for the external tests.
var RestoreApostrophes = restoreApostrophes

// EmDashes is emDashes, for the external tests.
var EmDashes = emDashes

// ReadDefenses is readDefenses, for the external tests: the entries of a
// damage (conditions false) or condition line, and the conditions a damage
// line names.
func ReadDefenses(line string, conditions bool) (entries, moved []*lkv1.Defense) {
	d := readDefenses(line, conditions)
	return d.entries, d.conditions
}

// TextFacts is what readTextFacts reads of text: damage types, saving
// throw ability and DC, conditions.
func TextFacts(text string) (damageTypes []string, save string, dc int32, conditions []string) {
	f := readTextFacts(text)
	return f.damageTypes, f.save, f.dc, f.conditions
}

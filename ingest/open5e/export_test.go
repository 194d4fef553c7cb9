package open5e

// PlainHyphens is plainHyphens, for the external tests.
var PlainHyphens = plainHyphens

// MendRunOns is mendRunOns, for the external tests.
var MendRunOns = mendRunOns

// RestoreApostrophes is restoreApostrophes, for the external tests.
var RestoreApostrophes = restoreApostrophes

// EmDashes is emDashes, for the external tests.
var EmDashes = emDashes

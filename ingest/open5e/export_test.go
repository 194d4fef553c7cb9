package open5e

// PlainHyphens is plainHyphens, for the external tests.
var PlainHyphens = plainHyphens

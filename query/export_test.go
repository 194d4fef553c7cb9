package query

// ToStatus exposes toStatus to the black-box tests.
var ToStatus = toStatus

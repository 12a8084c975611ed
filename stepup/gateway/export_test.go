package gateway

// VerdictOf is verdict, for the tests.
var VerdictOf = verdict

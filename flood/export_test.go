package flood

// Spellings is spellings, for the attack tests of package flood_test.
var Spellings = spellings

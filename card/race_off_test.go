//go:build !race

package card_test

// raceEnabled says the race detector is on: the slowest corpora then run a
// deterministic sample.
const raceEnabled = false

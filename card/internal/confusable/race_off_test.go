//go:build !race

package confusable

// raceEnabled says the race detector is on: the check against the source
// then runs on a sample.
const raceEnabled = false

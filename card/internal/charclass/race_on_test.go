//go:build race

package charclass

// raceEnabled says the race detector is on: the exhaustive table check
// then runs on a sample.
const raceEnabled = true

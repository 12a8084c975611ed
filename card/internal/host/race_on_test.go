//go:build race

package host

// raceEnabled says the race detector is on: the exhaustive IDNA table check
// then runs on a sample.
const raceEnabled = true

package plug

import "time"

// Showing is what a card's showing starts: the dwell time of the
// ticket's class, and when, by the gate's clock, an approval from the
// screen that just showed it becomes acceptable. It is the same whether
// or not anyone was shown the card before (so whoever asks learns
// nothing about other screens); the gate itself counts from the first
// showing, which is never later.
type Showing struct {
	// Dwell is the class's dwell time; zero means none.
	Dwell time.Duration
	// Now is the gate's time of the showing; AcceptableAt is Now + Dwell.
	Now, AcceptableAt time.Time
}

package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentstepup/asu/flood"
)

// Bounds on a flag's text and numbers; flood.Limits.Validate and
// sim.Config.Validate check the rest.
const (
	maxFlagLen = 64
	maxCount   = 1_000_000_000
)

// parseRate reads a rate: "N/DURATION" (10/10m: ten per ten minutes), or
// "off".
func parseRate(s string) (flood.Rate, error) {
	if s == "off" {
		return flood.Rate{N: -1}, nil
	}
	n, d, err := parsePair(s)
	if err != nil {
		return flood.Rate{}, err
	}
	return flood.Rate{N: n, Per: d}, nil
}

// parseLockout reads a lockout: "AFTER/DURATION" (3/15m: locked for 15
// minutes after 3 denials in a row), or "off".
func parseLockout(s string) (flood.Lockout, error) {
	if s == "off" {
		return flood.Lockout{After: -1}, nil
	}
	n, d, err := parsePair(s)
	if err != nil {
		return flood.Lockout{}, err
	}
	return flood.Lockout{After: int(n), For: d}, nil
}

var errPair = errors.New(`want COUNT/DURATION (such as 10/10m) or "off"`)

// parsePair reads "COUNT/DURATION" with a count in [1, maxCount] and a
// positive duration.
func parsePair(s string) (int64, time.Duration, error) {
	if len(s) > maxFlagLen {
		return 0, 0, fmt.Errorf("%w: longer than %d bytes", errPair, maxFlagLen)
	}
	count, dur, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, errPair
	}
	n, err := strconv.ParseInt(count, 10, 64)
	if err != nil || n < 1 || n > maxCount {
		return 0, 0, fmt.Errorf("%w: count must be a whole number from 1 to %d", errPair, maxCount)
	}
	d, err := time.ParseDuration(dur)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("%w: duration must be positive, such as 10m or 1h", errPair)
	}
	return n, d, nil
}

func rateString(r flood.Rate) string {
	if r.N < 0 {
		return "off"
	}
	return fmt.Sprintf("%d/%s", r.N, durationString(r.Per))
}

func lockoutString(l flood.Lockout) string {
	if l.After < 0 {
		return "off"
	}
	return fmt.Sprintf("%d/%s", l.After, durationString(l.For))
}

// rateFlag, lockoutFlag and scopeFlag are flag.Values over the fields they
// set.
type (
	rateFlag    flood.Rate
	lockoutFlag flood.Lockout
	scopeFlag   flood.Scope
)

func (f *rateFlag) String() string { return rateString(flood.Rate(*f)) }

func (f *rateFlag) Set(s string) error {
	r, err := parseRate(s)
	if err != nil {
		return err
	}
	*f = rateFlag(r)
	return nil
}

func (f *lockoutFlag) String() string { return lockoutString(flood.Lockout(*f)) }

func (f *lockoutFlag) Set(s string) error {
	l, err := parseLockout(s)
	if err != nil {
		return err
	}
	*f = lockoutFlag(l)
	return nil
}

func (f *scopeFlag) String() string { return string(*f) }

func (f *scopeFlag) Set(s string) error {
	switch sc := flood.Scope(s); sc {
	case flood.ScopeSession, flood.ScopeAgent, flood.ScopeUser:
		*f = scopeFlag(sc)
		return nil
	}
	return errors.New("want session, agent or user")
}

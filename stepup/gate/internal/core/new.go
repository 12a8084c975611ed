package core

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// New completes c and returns the gate made of it: flood control by
// default over the store's counters, every plug-in contained, the pending
// caps, the instance name and the key drawn when none was given, and the
// watermark. c does not change after.
func New(c Config) (*Gate, error) {
	g := &Gate{cfg: c}
	if !g.cfg.FloodSet {
		counters, ok := g.cfg.St.(store.Counters)
		if !ok {
			return nil, fmt.Errorf("%w: the store keeps no flood counters; use WithFlood", stepup.ErrConfig)
		}
		lim, err := flood.New(counters, flood.Limits{}, StoreClock(g.cfg.St))
		if err != nil {
			return nil, fmt.Errorf("%w: default flood limits: %v", stepup.ErrConfig, err)
		}
		g.cfg.Flood = lim
	}
	g.ContainPlugins() // a plug-in's panic, hang or late answer decides nothing
	g.cfg.Caps = ParkCaps(g.cfg.Caps, g.cfg.Flood)
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("%w: no randomness: %v", stepup.ErrConfig, err)
	}
	if g.cfg.Owner == "" {
		g.cfg.Owner = "gate-" + hex.EncodeToString(id[:])
	}
	if g.cfg.Key == nil {
		if g.cfg.MarkKeep != nil {
			return nil, fmt.Errorf("%w: WithWatermark needs WithKey or WithKeyRing: marks written under a random key cannot be read back", stepup.ErrConfig)
		}
		g.cfg.Key = make([]byte, MinKeySize)
		if _, err := rand.Read(g.cfg.Key); err != nil {
			return nil, fmt.Errorf("%w: no randomness for the gate key: %v", stepup.ErrConfig, err)
		}
	}
	if g.cfg.MarkKeep != nil {
		g.cfg.Mark = NewWatermark(g.cfg.MarkKeep, g.KeyRing, g.cfg.MarkPeers...)
	}
	return g, nil
}

package core

import (
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
)

// The gate's configuration, as the runtime side and the desk read it:
// fixed once [New] returns, so read without locking.

// St returns the gate's store.
func (g *Gate) St() store.Gate { return g.cfg.St }

// Policy returns the gate's policy, contained.
func (g *Gate) Policy() plug.Policy { return g.cfg.Policy }

// Approver returns the gate's approver, contained.
func (g *Gate) Approver() plug.Approver { return g.cfg.Approver }

// Coverage returns the gate's grant coverage check, contained.
func (g *Gate) Coverage() plug.Coverage { return g.cfg.Coverage }

// Resolver returns how the references calls name are resolved; nil
// resolves none.
func (g *Gate) Resolver() canon.Resolver { return g.cfg.Resolver }

// Executors returns the executor of each tool, contained. The map is the
// gate's own: read it, never write it.
func (g *Gate) Executors() map[string]plug.Executor { return g.cfg.Executors }

// Judging returns the model judge and the classes it decides; nil when
// people decide all.
func (g *Gate) Judging() *JudgeConfig { return g.cfg.Judging }

// Mark returns the store's high-water mark kept outside it; nil keeps
// none.
func (g *Gate) Mark() *Watermark { return g.cfg.Mark }

// Dwell returns the least time from showing to approval, by class. The
// map is the gate's own: read it, never write it.
func (g *Gate) Dwell() map[string]time.Duration { return g.cfg.Dwell }

// Groups returns the approver groups by name. The map is the gate's own:
// read it, never write it.
func (g *Gate) Groups() map[string][]string { return g.cfg.Groups }

// Caps returns the pending caps the store parks with.
func (g *Gate) Caps() store.Caps { return g.cfg.Caps }

// TTL returns how long approvers have when the policy does not say.
func (g *Gate) TTL() time.Duration { return g.cfg.TTL }

// Lease returns how long an execution is held before another gate may
// take it over.
func (g *Gate) Lease() time.Duration { return g.cfg.Lease }

// Poll returns how often Wait reads the store for changes made elsewhere.
func (g *Gate) Poll() time.Duration { return g.cfg.Poll }

// Owner returns this gate instance's name, as the owner of its
// executions.
func (g *Gate) Owner() string { return g.cfg.Owner }

// LocalNow reads this process's clock, for measuring its own waits.
func (g *Gate) LocalNow() time.Time { return g.cfg.Local() }

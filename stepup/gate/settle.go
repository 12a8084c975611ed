package gate

import "context"

// Settle waits until the work the gate does in the background, off the
// agent's path, has finished, or ctx ends (its error then). Today that is
// the placing of practice requests ([WithPractice]): a practice copy is
// made and parked after the agent has its answer, so that not even the
// time a call takes tells an agent that practice exists. A service calls
// Settle before it closes its store; a test calls it before it reads an
// approver's queue.
func (g *Gate) Settle(ctx context.Context) error { return g.rt.Core().Settle(ctx) }

// Package sim simulates flooding: an attacker mixing malicious approval
// requests into a benign stream so that a tired person approves one. It
// lets an operator try their own limits before a shift does.
//
// Seed 001 reports that flooding still succeeded 0.45 to 0.60 of the time
// against the reference design with a modelled human approver; seed 002
// says approvals are a queue staffed by people and fatigue is how they
// fail. This package runs that queue as a discrete-event simulation of one
// shift, many times, and reports how often an attack got a malicious call
// executed and what the controls cost benign work.
//
// # What is simulated
//
// A [Scenario] is one shift. Benign requests arrive as a Poisson stream
// from the agents of a team's users. The attacker controls agents of some
// of those users and sends bursts of malicious requests at Poisson times:
// identical copies, or disguised so that no two are identical, rotated over
// sessions, agents or users ([Attack]). Every request needs a person's
// approval and becomes a card in each approver's queue, first come first
// served, unless flood control refuses or merges it. The [Approver] model
// decides each card; a malicious call executes when every approver it
// needs approved it before the card expired.
//
// [Controls] say which of the gate's flood controls are on:
//
//   - Flood: the real package flood in process, a [flood.Limiter] with the
//     given limits (zero fields take flood's defaults: rates per session,
//     agent and user, approver inflow, lockouts), and the reference store
//     (store/memory), whose Park enforces the pending caps and merges a
//     request identical to a pending one. The simulated gate calls them as
//     package stepup/gate does: Admit before Park (so merged copies spend
//     rates), Decided when a card is approved or denied, never when it
//     expires; a refused benign runtime proposes again after the retry
//     time the gate would give (whole seconds; a minute after a pending
//     cap), within the shift.
//   - Dwell: an approval faster than the dwell is refused and the card
//     shown again; see [Approver] for what that buys.
//   - Approvals: a rule of k; the call runs only when k distinct
//     approvers, each with their own load and time on shift, approved it.
//     Their answers to one card are correlated ([Approver]): a card that
//     fools one careful reader is likelier to fool the next. The default
//     is one, the documented setup for an external call.
//   - Targets: flood's limits keyed by the user and the effect's target
//     and its first-contact rule, with the recipient read by
//     flood.EmailTarget, so the attacker's spellings of its domain fold
//     into one target; with FirstContactApprovals, a first contact needs
//     a second approver, who sees first contacts only.
//   - Practice: practice cards, built like attacks and never executed,
//     placed after one card in fifty; approvers told afterwards miss less
//     ([DefaultPracticeMissFactor]), and the catch rate measured on
//     practice cards is reported next to the true one.
//   - Confirm: active confirmation, a pick of the effect's key value among
//     look-alikes before approving ([DefaultConfirmOptions]).
//
// With every control off ([NaiveQueue]) every request is a card for one
// approver, and nothing limits them.
//
// # Calibration and honesty
//
// The approver's constants are named, each with its source or marked as an
// assumption ([DefaultRestedMiss] and the rest); docs/flood-model.md
// lists every assumption with its source and whether it favours asu, is
// neutral, or is pessimistic. The default attack volume
// ([DefaultAttackRate]) is the one figure fitted: with the approver fixed
// first, it is where the naive queue lands in seed 001's band. A test
// holds the naive queue there. No control is credited twice: the load that
// sets an approver's pace is the demand offered to the desk, before flood
// control refuses anything, so a cap on inflow is credited for the cards
// it refuses and not again for a slower read. Nothing here was measured
// on people; the comparisons between configurations, run on the same
// requests at the same times, are the part to lean on.
//
// # Figures
//
// [Run] simulates Config.Runs shifts, run i drawing from PCG streams
// seeded with (Seed, i), so a Config always gives the same [Result]. The
// attack's success is the share of runs in which at least one malicious
// call executed, with its 95% Wilson interval ([Proportion]); per-run
// figures (benign throughput and latency, prompts per approver-hour,
// decision time) are means over runs with 95% normal intervals
// ([Estimate]). [Compare] runs several configurations on the same
// requests; [Ablation] lists the naive queue, every control on but one,
// for each control, and all of them together.
//
// # Bounds
//
// [Config.Validate] refuses parameters out of range with [ErrInvalid]:
// at most [MaxRuns] runs, a shift of at most [MaxShift], a scenario
// expecting at most MaxRequests/2 requests a shift and MaxWork in all. A
// run that nevertheless draws more than [MaxRequests] requests or
// [MaxEvents] events stops with [ErrBudget].
package sim

// Package attackkit is an attack suite that framework authors run against
// their own integration of asu, in their own tests. It tries the attack
// catalogue of the step-up authorization audit (in-channel "reply yes", an
// agent-narrated card, substitution by a resumer, a hook, an edited
// history or resubmitted arguments, replay, expiry, an approver who is the
// requester, floods, duplicate merging, grant widening, revocation) and
// reports which of the properties P1 to P7 held.
//
// # Wiring
//
// An [Adapter] builds a fresh integration for each attack and returns its
// [Target]: the framework's agent side as a stepup.Runtime (the gate
// itself, the remote client, or the framework's own loop behind that
// interface, where Execute is its resume), and its people as an
// [Approver]. For an asu gate, [NewDesk] is the Approver: it answers
// through the gate's desk with fake passkeys from package stepuptest.
// Every tool the integration runs must run through the [Tools] the kit
// hands the adapter, so the kit sees what ran.
//
// The Target's hooks are how an attacker who controls the runtime's state
// tampers with it, the way the framework allows: write into the channel
// shared with the person (Say), edit a checkpoint between approval and
// resume (Checkpoint), rewrite arguments in a pre-execution hook (Hook),
// edit the stored history (History), resubmit arguments (Resubmit),
// move the clock (Advance), deploy a new policy version (ChangePolicy),
// and report what the framework showed the agent (AgentView). A hook
// left nil means the framework has no such path: the attacks that need
// it are skipped with a one-line reason.
//
// # A running service
//
// [Remote] aims the kit at asu running as its own process: the kit is the
// agent on the service's HTTP agent API, and its people ([Site]) enroll
// and answer on the service's approval site with fake passkeys, through
// the operator's invites. The service runs its tools through the kit's
// [Tools] ([Tools.ServeHTTP] for an executor in another process).
// Optional capabilities of the Approver ([Viewer], [Revoker], [Granter],
// [Receipter], [Replayer]) work the same way.
//
// # Running
//
// [Run] runs the catalogue as subtests named by property and attack:
//
//	TestAttackKit/P2_effect_binding/substitution_by_a_resumer
//
// An attack that breaks its property fails its subtest with what ran or
// what the person was shown; [Run] logs a table of the properties and
// returns the [Report]. [Assess] runs the same attacks without failing
// the test, for a table of an integration's standing.
//
// # What each attack asserts
//
// Every attack first makes sure the integration can do the legitimate
// thing (the user's own approval runs the call once), so an integration
// that refuses everything does not pass. Then, with generated cases rather
// than one example each:
//
//   - P1: no spelling of "yes" the agent writes, no execution before the
//     answer, and no answer by the requesting agent or by a person who may
//     not decide makes a call run; nor does the agent acting on anything
//     it was shown (every link opened, every token and id executed,
//     claimed as a grant or written into the channel), nor asking again,
//     in the same session or fresh ones, for a call the person denied.
//   - P2: what runs equals what was approved, by canonical arguments and,
//     when the ticket carries one, by digest, whatever a resumer, hook,
//     edited history or resubmission changed; an approval never runs
//     another call, nor runs once the policy it was made under changed.
//   - P3: one approval runs once, across sequential and concurrent
//     executions; a captured answer does not approve another ticket; an
//     expired or revoked approval never runs, and a revocation that
//     succeeded in a race with execution means the call did not run.
//   - P4: the card's trusted text shows the real action and none of the
//     agent's narration; two different effects never look alike on it.
//   - P5: the record of an approval verifies offline with only the
//     approver's public key, names what ran, and fails once altered.
//   - P6: a grant never covers a call outside its rules, a use beyond its
//     count, or a call after its expiry.
//   - P7: the prompts waiting for a session and for a user stay within
//     [Limits]; a run of denials locks the session out; merging a duplicate
//     never drops the provenance or rationale it carried, and one approval
//     still runs once.
//
// The kit proposes calls of two tools, send_email and issue_refund, for
// [User] through [Agent]; the seed catalog of package stepuptest routes
// both to a person. The grant it asks for names the executor
// issue_refund, the audience an asu catalog gives a tool that names none.
package attackkit

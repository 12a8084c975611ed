// Package flood admits approval requests, so that an agent cannot wear an
// approver down by asking again and again (property P7, flood resistance).
//
// Approvals are work for people. A person shown a prompt every few seconds
// stops reading and approves whatever comes, and flooding still succeeds
// against effect-bound approval when nothing limits it. A [Limiter] bounds
// how often a session and a user may ask, and locks a session or a user out
// after its approvers said no several times in a row.
//
// # Use in a gate
//
// The gate calls [Limiter.Admit] for each call that needs approval, before
// it parks the ticket, and treats any error as a denial with a reason (a
// [*LimitError] carries a RetryAfter for the runtime). It passes
// [Limiter.Caps] to store.Tickets.Park, which enforces the pending caps and
// merges a duplicate of a live pending ticket in the same transaction that
// parks it; a refused Park wraps [ErrPendingCap]. When an approver decides,
// the gate calls [Limiter.Denied] or [Limiter.Approved]. Tickets that
// expire or are cancelled are neither.
//
// Admit runs before Park, so a runtime that re-proposes the same call in a
// loop spends its rate even though Park merges the copies: such a loop is
// itself a flood.
//
// # Rates
//
// A [Rate] is N requests per window of length Per. Windows are aligned to
// multiples of Per since the Unix epoch, so every replica computes the same
// window from its clock, and each window is one counter in the store
// (store.Counters.AddCount), incremented atomically. The decision uses a
// sliding estimate: the current window's count plus the previous window's
// count weighted by how much of the previous window a sliding window ending
// now still overlaps. That is why the store keeps a key's two newest
// windows. With fixed windows alone, a session could ask N times just
// before a boundary and N times just after; with the estimate, the second
// burst is admitted only as the first one ages out. At most N requests are
// admitted in any one aligned window either way.
//
// A refused request is not counted, so a session that keeps flooding is
// admitted again, at its rate, as soon as its count allows.
//
// # Across replicas
//
// For a limit inside one process, golang.org/x/time/rate is the right tool:
// a token bucket in memory, far cheaper than any store. It is the wrong
// tool for a gate with replicas behind a load balancer: each replica would
// keep its own bucket, so with k replicas a session gets k times its rate,
// and a restart forgets every count. A Limiter keeps no state of its own;
// its counts are rows in the store every replica shares, so the limits hold
// across replicas and restarts (store/sqlite for one machine,
// store/postgres for many). The tests show the difference, and the
// benchmarks measure its price.
//
// # Lockouts
//
// A [Lockout] refuses admission for a while after a run of denials: the
// session's own run ([Limits.SessionLockout]), and the user's over all of
// their sessions ([Limits.UserLockout]). An approval ends the run. When a
// lockout ends the run is not forgotten: the next denial locks again at
// once, until an approval comes.
//
// # Failing closed
//
// A store error, a cancelled context, or a request without a session or a
// user refuses admission ([ErrUnavailable]). Counts never go down except by
// refunding a refused request, so a failed refund leaves a limit stricter,
// never looser.
//
// # Fatigue
//
// Limits bound how often people are asked; whether they still read is
// measured from the audit log with receipt.Metrics, per effect class. Read
// ApprovalRate together with MedianDecision: an approval rate near 1 with a
// median decision of a few seconds means nobody is reading, and the control
// exists on paper only. ApprovalsPerReviewerHour and PeakReviewerHour say
// how loaded approvers are: a minute of real review per approval caps a
// person at about 60 an hour, and sustained load well below that (under
// about 70%) keeps waits short. Expired counts requests nobody decided in
// time, a sign of an overloaded queue. When the figures go bad, ask less
// rather than asking people to try harder: lower the [Rate]s, or replace
// many small approvals by one bound plan (package grant).
package flood

// Package flood admits approval requests, so that an agent cannot wear an
// approver down by asking again and again (property P7, flood resistance).
//
// Approvals are work for people. A person shown a prompt every few seconds
// stops reading and approves whatever comes, and flooding still succeeds
// against effect-bound approval when nothing limits it. A [Limiter] bounds
// how often a session, an agent and a user may ask, how many prompts reach
// one approver, and locks a session, an agent or a user out after its
// approvers said no several times in a row.
//
// # Use in a gate
//
// The gate calls [Limiter.Admit] for each call that needs approval, before
// it parks the ticket, with a [Request] naming the call's user, agent and
// session and the approvers its prompt will reach. It treats any error as
// a denial with a reason (a [*LimitError] carries the [Scope] that refused
// and a RetryAfter for the runtime). It passes [Limiter.Caps] to
// store.Tickets.Park, which enforces the pending caps and merges a
// duplicate of a live pending ticket in the same transaction that parks
// it; a refused Park wraps [ErrPendingCap]. When an approver decides, the
// gate calls [Limiter.Decided]. Tickets that expire or are cancelled are
// not decisions.
//
// Admit runs before Park, so a runtime that re-proposes the same call in a
// loop spends its rates, and its approvers' inflow, even though Park
// merges the copies: such a loop is itself a flood.
//
// # Scopes
//
// Every limit is keyed by the principal, never by a bare session id, so
// that tenants whose agents happen to use the same session id share
// nothing:
//
//   - session ([ScopeSession]): one session of one agent of one user, the
//     triple (user, agent, session);
//   - agent ([ScopeAgent]): one agent of one user, the pair (user, agent),
//     over all of its sessions, so an agent that opens a fresh session for
//     every request gains nothing by it;
//   - user ([ScopeUser]): one user, over all of their agents and sessions;
//   - approver ([ScopeApprover]): one person receiving prompts, whichever
//     users' agents asked, so that many users' agents, each within its own
//     limits, cannot bury one approver together;
//   - target ([ScopeTarget]): one [Target] (a mail domain, a web domain,
//     a repository) on behalf of one user, over all of the user's agents
//     and sessions and every spelling of the target, for requests that
//     name one ([Request.Target]);
//   - first contact ([ScopeFirstContact]): a target the operator's
//     history has not seen, whichever users ask, and one user's requests
//     to such targets.
//
// A subject's ids are encoded injectively (each preceded by its length) and
// hashed under the scope's name, so no two distinct subjects share a
// counter, whatever characters the ids hold, and the store never holds the
// ids themselves.
//
// # Defaults
//
// The zero [Limits] is these defaults; each zero field takes its own:
//
//   - session rate [DefaultSessionRate]: 10 per 10 minutes;
//   - agent rate [DefaultAgentRate]: 20 per hour;
//   - user rate [DefaultUserRate]: 30 per hour;
//   - approver inflow [DefaultApproverInflow]: 30 prompts per hour;
//   - session lockout [DefaultSessionLockout]: 15 minutes after 3 denials
//     in a row;
//   - agent lockout [DefaultAgentLockout]: 30 minutes after 4 denials in a
//     row across the agent's sessions;
//   - user lockout [DefaultUserLockout]: an hour after 5 denials in a row
//     across the user's agents;
//   - pending tickets [DefaultPendingPerSession] 5 per session and
//     [DefaultPendingPerUser] 20 per user, enforced by the store.
//
// and, for requests that name a [Target]:
//
//   - target rate [DefaultTargetRate]: 10 per hour per (user, target);
//   - target lockout [DefaultTargetLockout]: a day after 3 denials in a
//     row of one user's requests to a known target;
//   - first-contact rate [DefaultFirstContactRate]: 5 per hour per user
//     to targets the operator's history has not seen;
//   - first-contact target rate [DefaultFirstContactTargetRate]: one per
//     hour per target, from any user, while the history has not seen it;
//   - first-contact lockout [DefaultFirstContactLockout]: a day, for
//     every user, after one denial of a request to such a target.
//
// A negative count turns a limit off. A [Request] may name at most
// [MaxApprovers] approvers.
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
// admitted in any one aligned window either way, and fewer than 2×N in any
// span of length Per. Under steady demand of exactly N evenly spaced
// requests per window, the estimate sits just over N and admits about N−1
// of them per window: one per two windows for N 1. Size a limit as an
// upper bound on a flood, not as the throughput a benign client gets.
//
// Replicas' clocks need not agree. The store counts an add to a window
// older than the key's newest in the newest, so a replica whose clock lags
// or was stepped back (by up to store.CountHorizon, a day) is counted in
// the present and gets no fresh allowance; it judges by the present's
// count without the sliding share, as a fixed window. A window more than
// store.CountHorizon ahead of a request is taken for a clock that ran
// ahead: it drops none of the present's windows, and the next count in
// the present takes its count over, so a replica whose clock jumped ahead
// admits at most its own allowance per window while it stays ahead, its
// requests then count in the present, and the present is not held back
// until that clock's time comes. Within the horizon a clock ahead is trusted: counts
// made in the present go to its window, which errs on the strict side for
// at most that long. Runs of denials keep their latest time, whichever
// replica's clock recorded it, so a lagging replica cannot shorten a
// lockout.
//
// A refused request is not counted in any scope, so a session that keeps
// flooding is admitted again, at its rate, as soon as its count allows,
// and a request refused by one approver's inflow spends nothing of the
// other approvers' or of its own session's.
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
// session's own run ([Limits.SessionLockout]), the agent's over all of its
// sessions ([Limits.AgentLockout]), and the user's over all of their
// agents ([Limits.UserLockout]). An approval ends all three runs. When a
// lockout ends the run is not forgotten: the next denial locks again at
// once, until an approval comes.
//
// # Targets and first contact
//
// An attacker who controls agents can spread its requests over as many
// sessions and agents as it likes, and disguise them so that no two are
// identical and none merges: every limit keyed by what it controls then
// gives it a fresh allowance, and the principal lockouts are reset by the
// benign approvals it mixes in. What it cannot vary is where the effect
// goes: the account, domain or repository it controls. A Limiter given
// [Request.Target] ([EmailTarget], [DomainTarget], [RepositoryTarget],
// [NamedTarget]; each folds the spellings of one target into one key)
// counts every request to it against [Limits.Target], and keeps a run of
// denials per (user, target) that only an approval of a request to that
// target ends. The asu gate passes, for every request, the registrable
// domain of the first recipient its card does not mark trusted, and none
// when every recipient is trusted.
//
// A target the operator's history has not seen (no request to it, on
// behalf of any user, was ever approved, and no operator introduced it
// with [Limiter.Introduce]) is a first contact. It counts against
// [Limits.FirstContactTarget], one an hour by default from all users
// together, so a burst to a new target is one card however many users'
// agents send it; against the user's [Limits.FirstContact], so rotating
// over many new targets is bounded too; and [Limits.FirstContactLockout]
// (one denial by default, from any user) replaces [Limits.TargetLockout].
// [Limiter.Admission] reports a first contact, so the gate can handle it
// more strictly, for example by asking a second approver. Package
// flood/sim measures what each buys.
//
// What the rule cannot do: an attack through a target already known (a
// changed amount to a known payee, a known repository) is no first
// contact; an attacker that first gets one harmless-looking request to
// its own target approved makes that target known to the whole
// operator, after which only [Limits.Target] and [Limits.TargetLockout]
// stand in its way; and an attacker rotating over targets it controls
// gets one card per target, up to the user's [Limits.FirstContact]. The
// history is the operator's, not each user's: a user's agent can tell
// from the stricter handling whether anyone has used a target before.
//
// # Failing closed
//
// A store error, a cancelled context, or a request without a user, an
// agent, a session or an approver refuses admission ([ErrUnavailable]).
// Counts never go down except by
// refunding a refused request, so a failed refund leaves a limit stricter,
// never looser.
//
// # Fatigue
//
// Limits bound how often people are asked; whether they still read is
// measured from the audit log with figures.Compute, per effect class. Read
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

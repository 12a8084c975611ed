// Package staffing sizes the people behind an approval queue.
//
// Approvals are work for people, and they behave like any queue. The model
// here is the back-of-the-envelope one a team should run before switching
// approvals on, and again whenever the figures in the audit log move:
//
//	approvals per day      = tasks per day × share needing approval × approvals per task
//	approvals in peak hour = approvals per day / 24 × peak factor
//	reviewers busy at peak = approvals in peak hour × review time / 1 hour
//	reviewers on shift     = reviewers busy at peak / target utilization, rounded up
//	tickets parked at peak = approvals in peak hour × median wait (Little's law)
//
// With 20,000 tasks a day, 6% needing approval, 1.2 approvals each, a peak
// hour at 3 times the mean and a minute of real review each, that is 1,440
// approvals a day, 180 in the peak hour and 3 reviewers fully busy. Kept
// below 70% utilization, so that waits stay short, that is 4.3 reviewers:
// 5 people on shift. At a 20-minute median wait about 60 tickets are
// parked at any moment, each holding a checkpoint of its task. [WorkedExample] is that load, and
// [Size] turns a [Load] into a [Plan].
//
// # Planning from the audit log
//
// Package [github.com/agentstepup/asu/staffing/fromaudit] reads the same
// inputs from audit records (an exported chain, as audit.ReadChain
// reads it) into [Observed]: tasks per day, the share of tasks that asked
// for an approval, approvals per such task, the busiest hour against the
// mean hour, and the median time to decision. [Observed.Apply] puts what
// was observed over a base load, so an operator plans from what happened
// and changes only what they mean to change. This package itself needs
// nothing but the standard library.
//
// The audit log records the time from request to decision, not the time a
// person spent reading: it includes time the ticket waited in the queue.
// It is the observed median wait, and an upper bound on the review time,
// so a plan that takes it as the review time overstates the reviewers
// needed when tickets wait. Set the review time from a measurement of the
// review itself where there is one.
//
// # Fatigue
//
// The failure mode of an approval queue is not a long wait but approval
// fatigue: people who are asked too often approve without reading. A plan
// that needs many reviewers says to ask less (allowlists, reversible
// drafts reviewed as a whole, bound plans), not to hire more; the fatigue
// figures themselves are figures.Compute.
package staffing

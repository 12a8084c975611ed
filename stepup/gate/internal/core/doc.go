// Package core is one gate's state and the machinery its two sides share:
// the store's clock, loading a ticket and checking it against its effect
// (P3), the policy asked again and the route a ticket takes to the people
// who may decide it (P6), the card rendered from the stored effect (P4),
// the gate's MAC over every approval it stores (P2), the audit record
// written in each decision's transaction (P5), flood admission (P7),
// notices, logs and metrics.
//
// Package run (the runtime's side: propose, wait, execute once) and
// package desk (the approvers' and the operator's side) build on it;
// package gate is the API over all three. Nothing here imports them.
package core

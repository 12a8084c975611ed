package store

// Gate is what a gate keeps durably, one interface of this package per
// concern: the store's clock, tickets, their approvers' votes and first
// showing, the answers refused as too soon, their timeouts, their single use under a lease, delegated
// grants, and the audit chain. Every backend in store/ implements it, and
// store/storetest holds a backend to it. Credentials and invites belong to
// the approver (package passkey), counters to flood control: a gate does
// not need them, so a store written for a gate alone may leave them out.
type Gate interface {
	Clock
	Tickets
	Votes
	Early
	Sweeper
	Execution
	Grants
	AuditLog
}

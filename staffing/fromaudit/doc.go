// Package fromaudit reads the inputs of a staffing plan from audit
// records: tasks per day, the share of tasks that asked for an approval,
// approvals per such task, the busiest hour against the mean hour, and the
// median time to decision.
//
// It is apart from package staffing so that sizing a queue needs nothing
// but the standard library, while reading audit records needs package
// receipt.
//
//	records, err := audit.ReadChain(f) // an exported audit chain
//	o, err := fromaudit.Observe(records)
//	load, _ := o.Apply(staffing.WorkedExample())
//	plan, err := staffing.Size(load)
package fromaudit

package core

// Active confirmation: before the passkey prompt of a ticket whose class
// the operator named (gate.WithConfirmation), the approver picks the
// effect's key value from a few look-alikes; the desk makes and checks
// the options, and refuses with plug.ErrPickNeeded and plug.ErrWrongPick.

// Confirms reports whether the approver of a ticket of effect class
// class first picks its key value.
func (g *Gate) Confirms(class string) bool { return g.cfg.Confirm[class] }

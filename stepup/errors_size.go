package stepup

import "github.com/agentstepup/asu/canon"

// ErrTooLarge is [canon.ErrTooLarge], the one sentinel for input over one
// of asu's size limits, which are derived in one table (canon.MaxArgs,
// canon.MaxEffect, canon.MaxCard, canon.MaxText). A call refused with it
// was not stored and nothing ran; its refusal is in the audit chain. A
// smaller call may be proposed.
var ErrTooLarge = canon.ErrTooLarge

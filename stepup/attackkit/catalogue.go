package attackkit

// attack is one entry of the catalogue.
type attack struct {
	prop Property
	name string
	run  func(c *check, k *kit)
}

// catalogue is every attack, in the order Run reports them. The names are
// the subtest names: stable, so a report can be compared across runs.
func catalogue() []attack {
	return []attack{
		{P1, "in-channel reply yes", inChannelReply},
		{P1, "agent runs its own call unapproved", unapprovedRun},
		{P1, "requester approves its own call", requesterApproves},
		{P1, "person who may not decide approves", strangerApproves},
		{P1, "agent acts on what it was shown", agentActsOnView},
		{P1, "denied call asked again", reaskDenied},

		{P2, "substitution by a resumer", substitution("a resumer", func(t Target) Tamper { return t.Checkpoint })},
		{P2, "substitution by a hook", substitution("a hook", func(t Target) Tamper { return t.Hook })},
		{P2, "substitution by an edited history", substitution("an edited history", func(t Target) Tamper { return t.History })},
		{P2, "substitution by resubmitted arguments", resubmission},
		{P2, "approval transfers to another call", transfer},
		{P2, "approval runs under a changed policy", policyChange},

		{P3, "replay of an executed approval", replay},
		{P3, "replay of an approver's answer", replayAnswer},
		{P3, "expired approval", expiry},
		{P3, "revoked approval", revocation},

		{P4, "agent-narrated card", narratedCard},
		{P4, "distinct effects render alike", distinctCards},

		{P5, "record forged or altered", forgedRecord},

		{P6, "grant widening", grantWidening},

		{P7, "flood of one session", floodSession},
		{P7, "flood across sessions", floodUser},
		{P7, "denials without lockout", lockout},
		{P7, "duplicate merge drops provenance", duplicateMerge},
	}
}

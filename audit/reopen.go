package audit

// DecisionReopened is the row of a ticket approved by several people
// that went back to pending because some of their votes no longer count
// (a voter left the group, lost their passkey or was revoked): its reason
// says whose and why, and how many approvals still stand.
const DecisionReopened = "reopened"

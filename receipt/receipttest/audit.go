package receipttest

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// AuditChain returns a valid audit chain of n records starting at seq 1,
// one decision a minute from start: a mix of allowed calls, approval
// requests, approvals, denials and executions over two effect classes and
// two approvers.
func AuditChain(n int, start time.Time) []receipt.AuditRecord {
	decisions := []string{receipt.DecisionAllow, receipt.DecisionNeedsApproval, receipt.DecisionApproved,
		receipt.DecisionExecuted, receipt.DecisionNeedsApproval, receipt.DecisionDenied}
	out := make([]receipt.AuditRecord, 0, n)
	var prev canon.Digest
	for i := range n {
		r := receipt.AuditRecord{
			Seq:           int64(i + 1),
			Time:          start.Add(time.Duration(i) * time.Minute).UnixMilli(),
			TicketID:      fmt.Sprintf("tk-%d", i/3),
			Task:          "t-42",
			Step:          fmt.Sprint(i),
			Session:       "s-1",
			Tool:          "send_email",
			EffectClass:   []string{"external", "irreversible"}[i%2],
			ArgsDigest:    canon.Sum([]byte(fmt.Sprint(i))),
			Principal:     canon.Principal{User: "user:ravi", Agent: "agent:reports", Delegations: []string{}},
			PolicyVersion: "2026-10-30.1",
			Decision:      decisions[i%len(decisions)],
			Reason:        "policy",
			Taint:         []string{},
		}
		if r.Decision == receipt.DecisionApproved || r.Decision == receipt.DecisionDenied {
			r.Approver = []string{"user:dana", "user:lee"}[(i/len(decisions))%2]
			r.DecisionMillis = int64(5000 + 1000*(i%7))
		}
		r.PrevHash = prev
		h, err := r.ComputeHash()
		if err != nil {
			panic("receipttest: audit record: " + err.Error())
		}
		r.Hash = h
		prev = h
		out = append(out, r)
	}
	return out
}

// GateKey returns a fixed ed25519 key for tests, the same for the same
// seed: the key a gate signs audit checkpoints with.
func GateKey(seed byte) ed25519.PrivateKey {
	var s [ed25519.SeedSize]byte
	for i := range s {
		s[i] = seed + byte(i)
	}
	return ed25519.NewKeyFromSeed(s[:])
}

// SignedCheckpoint returns the checkpoint of r signed with key.
func SignedCheckpoint(key ed25519.PrivateKey, r receipt.AuditRecord) receipt.SignedCheckpoint {
	cp := receipt.CheckpointOf(r)
	sig, err := receipt.SignCheckpoint(key, cp)
	if err != nil {
		panic("receipttest: sign checkpoint: " + err.Error())
	}
	return receipt.SignedCheckpoint{Checkpoint: cp, Sig: sig}
}

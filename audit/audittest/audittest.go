// Package audittest gives tests valid audit chains and fixed gate keys:
// a chain of decisions ([Chain]) and the checkpoints a gate signs over it
// ([GateKey], [SignedCheckpoint]).
package audittest

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// Chain returns a valid audit chain of n records starting at seq 1,
// one decision a minute from start: a mix of allowed calls, approval
// requests, approvals, denials and executions over two effect classes and
// two approvers.
func Chain(n int, start time.Time) []audit.Record {
	decisions := []string{audit.DecisionAllow, audit.DecisionNeedsApproval, audit.DecisionApproved,
		audit.DecisionExecuted, audit.DecisionNeedsApproval, audit.DecisionDenied}
	out := make([]audit.Record, 0, n)
	var prev canon.Digest
	for i := range n {
		r := audit.Record{
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
		if r.Decision == audit.DecisionApproved || r.Decision == audit.DecisionDenied {
			r.Approver = []string{"user:dana", "user:lee"}[(i/len(decisions))%2]
			r.DecisionMillis = int64(5000 + 1000*(i%7))
		}
		r.PrevHash = prev
		h, err := r.ComputeHash()
		if err != nil {
			panic("audittest: audit record: " + err.Error())
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
func SignedCheckpoint(key ed25519.PrivateKey, r audit.Record) audit.SignedCheckpoint {
	cp := audit.CheckpointOf(r)
	sig, err := audit.SignCheckpoint(key, cp)
	if err != nil {
		panic("audittest: sign checkpoint: " + err.Error())
	}
	return audit.SignedCheckpoint{Checkpoint: cp, Sig: sig}
}

package vectorgen

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
)

// chainStart is the time of the first record, Unix milliseconds.
const chainStart = 1793610000000

// chainRecords returns a valid chain of six decisions about two tickets,
// one record carrying arguments, text beyond ASCII and a number that
// canonicalizes.
func chainRecords() ([]audit.Record, error) {
	p := canon.Principal{User: "user:ravi", Agent: "agent:reports", Delegations: []string{}}
	base := func(seq int64, ticket, decision, reason string) audit.Record {
		return audit.Record{Seq: seq, Time: chainStart + (seq-1)*61_000, TicketID: ticket, Task: "t-42",
			Step: fmt.Sprint(seq), Session: "s-1", Tool: "send_email", EffectClass: "external",
			ArgsDigest: canon.Sum([]byte(ticket)), Principal: p, PolicyVersion: "2026-10-30.1",
			Decision: decision, Reason: reason, Taint: []string{}}
	}
	recs := []audit.Record{
		base(1, "", audit.DecisionAllow, "policy: read-only"),
		base(2, "tk-1", audit.DecisionNeedsApproval, "policy: external class"),
		base(3, "tk-1", audit.DecisionApproved, "passkey"),
		base(4, "tk-1", audit.DecisionExecuting, ""),
		base(5, "tk-1", audit.DecisionExecuted, ""),
		base(6, "tk-2", audit.DecisionDenied, "refusé — « not now » \U0001F6D1"),
	}
	recs[0].Args = json.RawMessage(`{"path":"/reports/q3.csv","limit":10,"ratio":1.50}`)
	recs[0].EffectClass, recs[0].Tool = "read", "read_file"
	recs[2].Approver, recs[2].DecisionMillis = "user:dana", 8200
	recs[2].Nonce = fmt.Sprintf("%x", stream("chain/nonce", 32))
	recs[2].CardHash = canon.Sum([]byte("card")).String()
	recs[4].Result, recs[4].IdempotencyKey = "ok", fmt.Sprintf("%x", stream("chain/idem", 16))
	recs[5].Approver, recs[5].DecisionMillis, recs[5].Taint = "user:lee", 4100, []string{"web"}
	return rehash(recs, canon.Digest{})
}

// rehash links records from prev and recomputes every hash: what someone
// rewriting the chain without the gate's key can do.
func rehash(recs []audit.Record, prev canon.Digest) ([]audit.Record, error) {
	out := slices.Clone(recs)
	for i := range out {
		out[i].PrevHash = prev
		h, err := out[i].ComputeHash()
		if err != nil {
			return nil, err
		}
		out[i].Hash = h
		prev = h
	}
	return out, nil
}

func chains() (*ChainFile, error) {
	key := ed25519.NewKeyFromSeed(stream("chain/gate-key", ed25519.SeedSize))
	forger := ed25519.NewKeyFromSeed(stream("chain/forger-key", ed25519.SeedSize))
	recs, err := chainRecords()
	if err != nil {
		return nil, err
	}
	signed := func(k ed25519.PrivateKey, cp audit.Checkpoint) *audit.SignedCheckpoint {
		sig, err := audit.SignCheckpoint(k, cp)
		if err != nil {
			panic(err) // the generator's own key
		}
		return &audit.SignedCheckpoint{Checkpoint: cp, Sig: sig}
	}
	at := func(i int) audit.Checkpoint { return audit.CheckpointOf(recs[i]) }

	altered := slices.Clone(recs)
	altered[2].Approver = "user:mallory"
	rewritten, err := rehash(altered, canon.Digest{})
	if err != nil {
		return nil, err
	}
	reordered := slices.Clone(recs)
	reordered[3], reordered[4] = reordered[4], reordered[3]
	moved := signed(key, at(2))
	moved.Seq = 2

	cases := []struct {
		name, description string
		records           []audit.Record
		anchor            canon.Digest
		cp                *audit.SignedCheckpoint
		valid             bool
	}{
		{"valid/from-start", "The whole chain, from its first record.", recs, canon.Digest{}, nil, true},
		{"valid/through-checkpoint", "The whole chain, passing through a checkpoint at seq 3.", recs, canon.Digest{}, signed(key, at(2)), true},
		{"valid/after-checkpoint", "A window that starts right after a checkpoint at seq 3.", recs[3:], canon.Digest{}, signed(key, at(2)), true},
		{"valid/after-anchor", "A window verified from an anchor: the hash of seq 3, kept by the auditor.", recs[3:], recs[2].Hash, nil, true},
		{"valid/rewritten-without-checkpoint", "A chain rewritten from the start (an approver changed, every hash recomputed) " +
			"verifies on its own: only a signed checkpoint or a kept anchor exposes it.", rewritten, canon.Digest{}, nil, true},

		{"row-altered/hash-kept", "The approver of seq 3 was changed; its hash was kept.",
			altered, canon.Digest{}, nil, false},
		{"row-altered/rewritten-through-checkpoint", "The rewritten chain, checked against a checkpoint the gate signed at seq 3.",
			rewritten, canon.Digest{}, signed(key, at(2)), false},
		{"row-altered/rewritten-after-checkpoint", "The rewritten chain's window after seq 3, checked against the gate's checkpoint at seq 3.",
			rewritten[3:], canon.Digest{}, signed(key, at(2)), false},
		{"row-removed/middle", "Seq 4 was removed.", slices.Delete(slices.Clone(recs), 3, 4), canon.Digest{}, nil, false},
		{"row-removed/first", "Seq 1 was removed and nothing vouches for where the export starts.", recs[1:], canon.Digest{}, nil, false},
		{"row-removed/tail-before-checkpoint", "The last record was removed; the gate had signed a checkpoint at seq 6.",
			recs[:5], canon.Digest{}, signed(key, at(5)), false},
		{"reordered", "Seq 4 and seq 5 swapped places.", reordered, canon.Digest{}, nil, false},
		{"checkpoint/forged-key", "The checkpoint of the rewritten chain, signed by a key that is not the gate's.",
			rewritten, canon.Digest{}, signed(forger, audit.CheckpointOf(rewritten[2])), false},
		{"checkpoint/signature-reused", "The gate's signature of seq 3, with the checkpoint moved to seq 2.",
			recs, canon.Digest{}, moved, false},
		{"checkpoint/hash-edited", "A checkpoint whose hash was edited to the rewritten chain's; the signature is the gate's of the original.",
			rewritten, canon.Digest{}, func() *audit.SignedCheckpoint {
				c := signed(key, at(2))
				c.Hash = rewritten[2].Hash
				return c
			}(), false},
	}
	f := &ChainFile{
		Description: `Audit chains. Each record hashes as SHA-256("asu/v1/audit" ‖ 0x00 ‖ JCS(record with "hash" set to 64 zeros)); ` +
			"seq increases by one and prev_hash is the previous record's hash (64 zeros before seq 1). Without checkpoint or anchor, " +
			"a chain must start at seq 1; with an anchor, the first record's prev_hash is the anchor. A checkpoint is signed by the gate " +
			`(ed25519 over SHA-256("asu/v1/checkpoint" ‖ 0x00 ‖ uint64be(seq) ‖ hash[32] ‖ uint64be(time)); sig is standard base64): ` +
			"the records either start right after it (first seq is its seq+1, first prev_hash its hash) or start at seq 1 and pass through it " +
			"(the record at its seq has its hash).",
		GatePublicKey: hexOf(key.Public().(ed25519.PublicKey)),
	}
	for _, c := range cases {
		v := ChainVector{Name: c.name, Description: c.description, Checkpoint: c.cp, Valid: c.valid}
		if !c.anchor.IsZero() {
			v.Anchor = c.anchor.String()
		}
		for _, r := range c.records {
			raw, err := json.Marshal(r)
			if err != nil {
				return nil, err
			}
			v.Records = append(v.Records, raw)
		}
		f.Vectors = append(f.Vectors, v)
	}
	return f, nil
}

package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/agentstepup/asu/canon"
)

// Tag separates audit chain hashes from every other hash in asu.
const Tag = "asu/v1/audit"

// Decisions recorded in the audit chain.
const (
	DecisionAllow         = "allow"          // policy allowed the call at once
	DecisionDeny          = "deny"           // policy or a check refused it
	DecisionNeedsApproval = "needs_approval" // parked for an approver
	DecisionApproved      = "approved"       // an approver approved the ticket (the last of its quorum)
	DecisionCosigned      = "cosigned"       // one approver of several a ticket needs approved it
	DecisionDenied        = "denied"         // an approver denied the ticket
	DecisionExpired       = "expired"        // the ticket timed out
	DecisionCancelled     = "cancelled"      // the ticket was withdrawn or timed out to cancel
	DecisionExecuted      = "executed"       // the stored call ran
	DecisionFailed        = "failed"         // the stored call ran and the tool failed
	DecisionExecuting     = "executing"      // the approval was spent: the stored call is about to run
	DecisionReclaimed     = "reclaimed"      // another gate took over an execution whose lease expired
	DecisionAbandoned     = "abandoned"      // a spent approval's call was never run (it changed, or has no executor)
	DecisionRevoked       = "revoked"        // an approval, credential, grant or invite was revoked
	DecisionRefused       = "refused"        // an answer an enrolled person's authenticator signed was refused (the ticket is unchanged)
	DecisionNotRun        = "not_run"        // an Execute (or an executor's token) was refused: nothing was spent and nothing ran
)

// Record is one decision, as the reference program's audit record lists it. Records
// form a hash chain: each carries the hash of the one before it, so deleting,
// inserting, reordering or editing a row is detected by [VerifyChain].
// Arguments appear only by digest unless the integrator opts in to Args.
type Record struct {
	Seq            int64           `json:"seq"`       // position in the chain, from 1
	Time           int64           `json:"time"`      // Unix milliseconds of the decision
	TicketID       string          `json:"ticket_id"` // empty for decisions that parked nothing
	Task           string          `json:"task"`
	Step           string          `json:"step"`
	Session        string          `json:"session"`
	Tool           string          `json:"tool"`
	EffectClass    string          `json:"effect_class"` // read, reversible, external, irreversible
	ArgsDigest     canon.Digest    `json:"args_digest"`  // digest of the whole effect
	Args           json.RawMessage `json:"args,omitempty"`
	Principal      canon.Principal `json:"principal"`
	PolicyVersion  string          `json:"policy_version"`
	Decision       string          `json:"decision"`
	Reason         string          `json:"reason"`
	Taint          []string        `json:"taint"`
	Approver       string          `json:"approver"`
	Nonce          string          `json:"nonce"`           // hex; empty when no approval
	CardHash       string          `json:"card_hash"`       // hex; empty when no card
	DecisionMillis int64           `json:"decision_millis"` // time from request to this decision
	Result         string          `json:"result"`          // short outcome of an execution
	IdempotencyKey string          `json:"idempotency_key"`
	PrevHash       canon.Digest    `json:"prev_hash"` // zero for the first record
	Hash           canon.Digest    `json:"hash"`      // ComputeHash of this record
}

// ErrChainBroken is wrapped by every [VerifyChain] failure.
var ErrChainBroken = errors.New("audit: chain broken")

// ComputeHash returns the hash of r chained to r.PrevHash:
//
//	SHA-256("asu/v1/audit" ‖ 0x00 ‖ JCS(r with hash set to 64 zeros))
//
// Stores call it inside the transaction that appends r, after setting Seq
// and PrevHash from the current head.
//
// It fails, wrapping [canon.ErrInvalidUTF8], when a text field is not valid
// UTF-8: encoding/json would hash such text as U+FFFD, so two different
// records would share one hash.
func (r Record) ComputeHash() (canon.Digest, error) {
	if !r.validUTF8() {
		return canon.Digest{}, fmt.Errorf("audit record: text field: %w", canon.ErrInvalidUTF8)
	}
	return r.hashValid()
}

// hashValid is ComputeHash of a record whose text is known to be valid
// UTF-8 (the streaming reader's fast parser checked it).
func (r Record) hashValid() (canon.Digest, error) {
	r.Hash = canon.Digest{}
	// The tag and the canonical record are written to one buffer and
	// hashed in one call, so that a record of common size is hashed
	// without a heap allocation.
	var buf [1024]byte
	head := append(append(buf[:0], Tag...), 0)
	tagged, ok := r.appendCanonical(head)
	if !ok {
		c, err := r.marshalCanonical()
		if err != nil {
			return canon.Digest{}, err
		}
		tagged = append(head, c...)
	} else if len(tagged)-len(head) > MaxRecord {
		return canon.Digest{}, fmt.Errorf("audit record: over %d bytes: %w", MaxRecord, canon.ErrTooLarge)
	}
	return canon.Digest(sha256.Sum256(tagged)), nil
}

// marshalCanonical is the canonical form of r by definition: r as
// encoding/json writes it (nil lists as empty ones), canonicalized.
func (r Record) marshalCanonical() ([]byte, error) {
	if r.Taint == nil {
		r.Taint = []string{}
	}
	if r.Principal.Delegations == nil {
		r.Principal.Delegations = []string{}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("audit record: %w", err)
	}
	c, err := canon.Limits{MaxBytes: MaxLine}.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("audit record: %w", err)
	}
	if len(c) > MaxRecord {
		return nil, fmt.Errorf("audit record: over %d bytes: %w", MaxRecord, canon.ErrTooLarge)
	}
	return c, nil
}

// maxSafeInteger is the largest integer whose ES6 form is its decimal
// digits.
const maxSafeInteger = 1<<53 - 1

// appendCanonical appends the canonical form of r (valid UTF-8 text, as
// ComputeHash checks first) to out without encoding/json or a parse: the
// keys in RFC 8785 order, strings with its escaping. It reports false,
// leaving the work to marshalCanonical, for what it does not write the
// same way: arguments, integers an ES6 number does not hold exactly, and
// records so large that encoding/json's form (up to six bytes for each
// canonical one) might exceed canon's size limit.
func (r Record) appendCanonical(out []byte) ([]byte, bool) {
	if len(r.Args) > 0 {
		return out, false
	}
	for _, n := range []int64{r.Seq, r.Time, r.DecisionMillis} {
		if n > maxSafeInteger || n < -maxSafeInteger {
			return out, false
		}
	}
	str := func(key, v string) {
		out = append(out, ',', '"')
		out = append(out, key...)
		out = append(out, '"', ':')
		out = canon.AppendString(out, v)
	}
	num := func(key string, v int64) {
		out = append(out, ',', '"')
		out = append(out, key...)
		out = append(out, '"', ':')
		out = strconv.AppendInt(out, v, 10)
	}
	digest := func(key string, d canon.Digest) {
		out = append(out, ',', '"')
		out = append(out, key...)
		out = append(out, '"', ':', '"')
		out = hex.AppendEncode(out, d[:])
		out = append(out, '"')
	}
	list := func(vs []string) {
		out = append(out, '[')
		for i, v := range vs {
			if i > 0 {
				out = append(out, ',')
			}
			out = canon.AppendString(out, v)
		}
		out = append(out, ']')
	}
	out = append(out, '{', '"', 'a', 'p', 'p', 'r', 'o', 'v', 'e', 'r', '"', ':')
	out = canon.AppendString(out, r.Approver)
	digest("args_digest", r.ArgsDigest)
	str("card_hash", r.CardHash)
	str("decision", r.Decision)
	num("decision_millis", r.DecisionMillis)
	str("effect_class", r.EffectClass)
	digest("hash", r.Hash)
	str("idempotency_key", r.IdempotencyKey)
	str("nonce", r.Nonce)
	str("policy_version", r.PolicyVersion)
	digest("prev_hash", r.PrevHash)
	out = append(out, `,"principal":{"agent":`...)
	out = canon.AppendString(out, r.Principal.Agent)
	out = append(out, `,"delegations":`...)
	list(r.Principal.Delegations)
	out = append(out, `,"user":`...)
	out = canon.AppendString(out, r.Principal.User)
	out = append(out, '}')
	str("reason", r.Reason)
	str("result", r.Result)
	num("seq", r.Seq)
	str("session", r.Session)
	str("step", r.Step)
	out = append(out, `,"taint":`...)
	list(r.Taint)
	str("task", r.Task)
	str("ticket_id", r.TicketID)
	num("time", r.Time)
	str("tool", r.Tool)
	out = append(out, '}')
	if len(out) > canon.DefaultMaxBytes/6 {
		return out, false
	}
	return out, true
}

// validUTF8 reports whether every text field of r is valid UTF-8.
func (r Record) validUTF8() bool {
	strs := []string{r.TicketID, r.Task, r.Step, r.Session, r.Tool, r.EffectClass, r.Principal.User,
		r.Principal.Agent, r.PolicyVersion, r.Decision, r.Reason, r.Approver, r.Nonce, r.CardHash, r.Result,
		r.IdempotencyKey}
	strs = append(append(strs, r.Principal.Delegations...), r.Taint...)
	for _, s := range strs {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// ChainBreak says where a chain first fails to verify.
type ChainBreak struct {
	Index int    `json:"index"` // position in the slice given to VerifyChain, or in the stream a Verifier read, from 0
	Seq   int64  `json:"seq"`   // the record's own sequence number
	Why   string `json:"why"`   // what did not match
}

// Error says where the chain first broke and why. It counts records from
// 1, as an export's lines are counted: record n of an export, the one
// Index n-1 names, is its line n, which is what [ErrMalformed] errors and
// [Verifier.Line] number.
func (b *ChainBreak) Error() string {
	return fmt.Sprintf("%v at record %d (seq %d): %s", ErrChainBroken, b.Index+1, b.Seq, b.Why)
}

// Unwrap returns [ErrChainBroken].
func (b *ChainBreak) Unwrap() error { return ErrChainBroken }

// VerifyChain checks that records form one unbroken chain: sequence
// numbers increase by one, each PrevHash is the previous record's hash, and
// each Hash is what [Record.ComputeHash] gives. It returns nil or a
// [*ChainBreak] naming the first failure.
//
// With a zero anchor the chain must start at the first record (Seq 1, zero
// PrevHash): a chain whose first records were deleted is refused, not
// checked from wherever it starts. A window of a longer chain verifies
// against an anchor, the hash of the record before it that the caller
// verified or kept itself, or with a checkpoint the gate signed
// ([VerifyChainFrom]).
func VerifyChain(records []Record, anchor canon.Digest) error {
	if anchor.IsZero() && len(records) > 0 && records[0].Seq != 1 {
		return &ChainBreak{Index: 0, Seq: records[0].Seq,
			Why: "the chain does not start at the first record (verify it from an anchor or a signed checkpoint)"}
	}
	return verifyChain(records, anchor)
}

// verifyChain checks records link to prev and to each other.
func verifyChain(records []Record, prev canon.Digest) error {
	for i, r := range records {
		if i > 0 && r.Seq != records[i-1].Seq+1 {
			return &ChainBreak{Index: i, Seq: r.Seq, Why: fmt.Sprintf("sequence jumps from %d", records[i-1].Seq)}
		}
		if !r.PrevHash.Equal(prev) {
			return &ChainBreak{Index: i, Seq: r.Seq, Why: "prev_hash does not match the previous record"}
		}
		h, err := r.ComputeHash()
		if err != nil {
			return &ChainBreak{Index: i, Seq: r.Seq, Why: err.Error()}
		}
		if !h.Equal(r.Hash) {
			return &ChainBreak{Index: i, Seq: r.Seq, Why: "record hash does not match its content"}
		}
		prev = h
	}
	return nil
}

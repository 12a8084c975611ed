package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store"
)

// sealTag separates the gate's approval MACs from every other use of its
// key.
const sealTag = "asu/v1/gate-approval"

// sealEvidence is the evidence of an approval the gate made itself (the
// policy allowed the call, or a grant covered it): a MAC with the gate's
// key over everything the approval binds. The database is not trusted to
// approve: a row written or edited without the key does not verify, so it
// does not run.
type sealEvidence struct {
	MAC string `json:"gate_mac"`
}

// Seal returns the evidence of the gate's own approval of a by approver.
func (g *Gate) Seal(a store.Approval, approver string) []byte {
	// The JSON of sealEvidence, written directly: a hex MAC needs no
	// escaping.
	out := make([]byte, 0, len(`{"gate_mac":""}`)+2*sha256.Size)
	out = append(out, `{"gate_mac":"`...)
	out = hex.AppendEncode(out, g.MAC(a, approver))
	return append(out, `"}`...)
}

// CheckSeal verifies the gate's MAC on an approval it made itself.
func (g *Gate) CheckSeal(a store.Approval) error {
	var ev sealEvidence
	if err := json.Unmarshal(a.Evidence, &ev); err != nil {
		return fmt.Errorf("%w: the gate's approval carries no MAC", stepup.ErrBadAssertion)
	}
	got, err := hex.DecodeString(ev.MAC)
	if err != nil || !hmac.Equal(got, g.MAC(a, a.Approver)) {
		return fmt.Errorf("%w: the gate's approval MAC does not verify", stepup.ErrBadAssertion)
	}
	return nil
}

// MAC is HMAC-SHA256 under the gate's key of
//
//	"asu/v1/gate-approval" ‖ 0x00 ‖ lp(id) ‖ lp(approver) ‖ lp(policy version) ‖
//	digest[32] ‖ nonce[32] ‖ cardhash[32] ‖ uint64be(expiry unix seconds)
//
// where lp(s) is uint32be(len(s)) ‖ s.
func (g *Gate) MAC(a store.Approval, approver string) []byte {
	msg := make([]byte, 0, len(sealTag)+1+12+len(a.ID)+len(approver)+len(a.PolicyVersion)+3*32+8)
	msg = append(append(msg, sealTag...), 0)
	for _, s := range [...]string{a.ID, approver, a.PolicyVersion} {
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(s)))
		msg = append(msg, s...)
	}
	msg = append(msg, a.Digest[:]...)
	msg = append(msg, a.Nonce[:]...)
	msg = append(msg, a.CardHash[:]...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(a.ExpiresAt.Unix()))
	m, _ := g.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, g.Key)
	} else {
		m.Reset()
	}
	m.Write(msg)
	sum := m.Sum(nil)
	g.macs.Put(m)
	return sum
}

// sealedAnswer is the evidence of a person's approval as the gate keeps
// it: the approver's own evidence, and the gate's MAC over the row it
// approves. The approver's evidence proves who approved what; the MAC
// ties it to this ticket, so the same evidence copied onto another row
// (the same call, nonce and card under a new id) does not run.
type sealedAnswer struct {
	MAC    string `json:"gate_mac"`
	Answer []byte `json:"answer"`
}

// SealAnswer returns the evidence to store for approver's answer about a.
func (g *Gate) SealAnswer(a store.Approval, approver string, evidence []byte) []byte {
	raw, _ := json.Marshal(sealedAnswer{MAC: hex.EncodeToString(g.MAC(a, approver)), Answer: evidence})
	return raw
}

// OpenAnswer checks the gate's MAC on a person's approval of a and
// returns the approver's own evidence.
func (g *Gate) OpenAnswer(a store.Approval) ([]byte, error) {
	return g.OpenAnswerOf(a, a.Approver, a.Evidence)
}

// OpenAnswerOf checks the gate's MAC in raw, approver's sealed answer
// about a, and returns the approver's own evidence.
func (g *Gate) OpenAnswerOf(a store.Approval, approver string, raw []byte) ([]byte, error) {
	var ev sealedAnswer
	if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Answer) == 0 {
		return nil, fmt.Errorf("%w: the approval carries no sealed answer", stepup.ErrBadAssertion)
	}
	got, err := hex.DecodeString(ev.MAC)
	if err != nil || !hmac.Equal(got, g.MAC(a, approver)) {
		return nil, fmt.Errorf("%w: the approval is not this ticket's", stepup.ErrBadAssertion)
	}
	return ev.Answer, nil
}

package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

// sealTag separates the gate's approval MACs from every other use of its
// key.
const sealTag = "asu/v1/gate-approval"

// sealEvidence is the evidence of an approval the gate made itself (the
// policy allowed the call, or a grant covered it): a MAC with the gate's
// key over everything the approval binds, and the id of that key. The
// database is not trusted to approve: a row written or edited without the
// key does not verify, so it does not run. Evidence written before key
// ids has no gate_key; it verifies under any key still in force.
type sealEvidence struct {
	MAC string `json:"gate_mac"`
	Key string `json:"gate_key,omitempty"`
}

// KeyRing returns the ring the gate MACs with now: the one WithKeyRing
// gave, or the ring of one key of WithKey.
func (g *Gate) KeyRing() *keyring.Ring {
	if g.cfg.Keys != nil {
		if r := g.cfg.Keys.Ring(); r != nil {
			return r
		}
	}
	g.single.Do(func() { g.one, _ = keyring.Single(g.cfg.Key) })
	return g.one
}

// Seal returns the evidence of the gate's own approval of a by approver.
func (g *Gate) Seal(a store.Approval, approver string) []byte {
	mac, id := g.MAC(a, approver)
	// The JSON of sealEvidence, written directly: a hex MAC and a key id
	// need no escaping.
	out := make([]byte, 0, len(`{"gate_mac":"","gate_key":""}`)+2*sha256.Size+len(id))
	out = append(out, `{"gate_mac":"`...)
	out = hex.AppendEncode(out, mac)
	out = append(out, `","gate_key":"`...)
	out = append(out, id...)
	return append(out, `"}`...)
}

// CheckSeal verifies the gate's MAC on an approval it made itself, with
// the key it names as it stands at now (the store's time).
func (g *Gate) CheckSeal(a store.Approval, now time.Time) error {
	var ev sealEvidence
	if err := json.Unmarshal(a.Evidence, &ev); err != nil {
		return fmt.Errorf("%w: the gate's approval carries no MAC", stepup.ErrBadAssertion)
	}
	if err := g.checkMAC(a, a.Approver, ev.MAC, ev.Key, now); err != nil {
		return fmt.Errorf("%w: the gate's approval MAC does not verify: %w", stepup.ErrBadAssertion, err)
	}
	return nil
}

// checkMAC verifies a hex MAC over a by approver made by key id (none:
// evidence from before key ids) at now.
func (g *Gate) checkMAC(a store.Approval, approver, mac, id string, now time.Time) error {
	got, err := hex.DecodeString(mac)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: malformed MAC", keyring.ErrMismatch)
	}
	r := g.KeyRing()
	if r == nil {
		return fmt.Errorf("%w: the gate has no key", keyring.ErrMismatch)
	}
	_, err = r.Verify(id, now, func(secret []byte) bool { return hmac.Equal(got, g.macWith(secret, a, approver)) })
	return err
}

// MAC returns HMAC-SHA256 under the gate's current key, and that key's
// id, of
//
//	"asu/v1/gate-approval" ‖ 0x00 ‖ lp(id) ‖ lp(approver) ‖ lp(policy version) ‖
//	digest[32] ‖ nonce[32] ‖ cardhash[32] ‖ uint64be(expiry unix seconds)
//
// where lp(s) is uint32be(len(s)) ‖ s. The key id is not MACed: it only
// picks the key, and a MAC checked under another key does not verify.
func (g *Gate) MAC(a store.Approval, approver string) (mac []byte, keyID string) {
	r := g.KeyRing()
	if r == nil {
		return nil, ""
	}
	k := r.Current()
	return g.macWith(k.Secret, a, approver), k.ID
}

// macWith is the MAC under secret.
func (g *Gate) macWith(secret []byte, a store.Approval, approver string) []byte {
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
	p := g.macPool(secret)
	m, _ := p.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, secret)
	} else {
		m.Reset()
	}
	m.Write(msg)
	sum := m.Sum(nil)
	p.Put(m)
	return sum
}

// macPool is the pool of HMAC states under secret: one per key, so a MAC
// is never made with the state of another key.
func (g *Gate) macPool(secret []byte) *sync.Pool {
	if p, ok := g.macs.Load(string(secret)); ok {
		return p.(*sync.Pool)
	}
	p, _ := g.macs.LoadOrStore(string(secret), &sync.Pool{})
	return p.(*sync.Pool)
}

// sealedAnswer is the evidence of a person's approval as the gate keeps
// it: the approver's own evidence, and the gate's MAC over the row it
// approves, with the id of the key that made it. The approver's evidence
// proves who approved what; the MAC ties it to this ticket, so the same
// evidence copied onto another row (the same call, nonce and card under a
// new id) does not run.
type sealedAnswer struct {
	MAC    string `json:"gate_mac"`
	Key    string `json:"gate_key,omitempty"`
	Answer []byte `json:"answer"`
}

// SealAnswer returns the evidence to store for approver's answer about a.
func (g *Gate) SealAnswer(a store.Approval, approver string, evidence []byte) []byte {
	mac, id := g.MAC(a, approver)
	raw, _ := json.Marshal(sealedAnswer{MAC: hex.EncodeToString(mac), Key: id, Answer: evidence})
	return raw
}

// OpenAnswer checks the gate's MAC on a person's approval of a, as its
// key stands at now, and returns the approver's own evidence.
func (g *Gate) OpenAnswer(a store.Approval, now time.Time) ([]byte, error) {
	return g.OpenAnswerOf(a, a.Approver, a.Evidence, now)
}

// OpenAnswerOf checks the gate's MAC in raw, approver's sealed answer
// about a, as its key stands at now, and returns the approver's own
// evidence.
func (g *Gate) OpenAnswerOf(a store.Approval, approver string, raw []byte, now time.Time) ([]byte, error) {
	var ev sealedAnswer
	if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Answer) == 0 {
		return nil, fmt.Errorf("%w: the approval carries no sealed answer", stepup.ErrBadAssertion)
	}
	if err := g.checkMAC(a, approver, ev.MAC, ev.Key, now); err != nil {
		return nil, fmt.Errorf("%w: the approval is not this ticket's: %w", stepup.ErrBadAssertion, err)
	}
	return ev.Answer, nil
}

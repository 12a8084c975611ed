package attackkit

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
)

// alteration changes a copy of an approval record the way someone who
// holds it, but not the approver's key, would.
type alteration struct {
	name  string
	apply func(r *receipt.Receipt)
}

var alterations = []alteration{
	{"effect swapped for another, digest recomputed", func(r *receipt.Receipt) {
		var e map[string]json.RawMessage
		if json.Unmarshal(r.Effect, &e) != nil {
			return
		}
		e["args"] = setArg(e["args"], "to", "attacker@evil.example")
		raw, _ := json.Marshal(e)
		if b, err := canon.Canonicalize(raw); err == nil {
			r.Effect, r.Digest = b, canon.Sum(b)
		}
	}},
	{"digest changed", func(r *receipt.Receipt) { r.Digest[0] ^= 1 }},
	{"card swapped, card hash recomputed", func(r *receipt.Receipt) {
		alt := bytes.Replace(r.Card, []byte("finance@example.com"), []byte("boss@example.com"), 1)
		if h, err := card.HashJSON(alt); err == nil {
			r.Card, r.CardHash = alt, h
		}
	}},
	{"card hash changed", func(r *receipt.Receipt) { r.CardHash[31] ^= 0x80 }},
	{"expiry extended", func(r *receipt.Receipt) { r.ExpiresAt += 24 * 3600 }},
	{"nonce changed", func(r *receipt.Receipt) { flip(r.Nonce) }},
	{"signature changed", func(r *receipt.Receipt) { flip(r.Assertion.Signature) }},
	{"authenticator data changed", func(r *receipt.Receipt) { flip(r.Assertion.AuthenticatorData) }},
	{"client data changed", func(r *receipt.Receipt) {
		r.Assertion.ClientDataJSON = bytes.Replace(r.Assertion.ClientDataJSON, []byte(`"webauthn.get"`),
			[]byte(`"webauthn.create"`), 1)
	}},
	{"public key swapped", func(r *receipt.Receipt) { flip(r.Approver.PublicKey) }},
}

func flip(b []byte) {
	if len(b) > 0 {
		b[len(b)/2] ^= 1
	}
}

// forgedRecord gets the record of an approval that ran, verifies it as a
// third party holding only the approver's public key would, checks it
// names what ran, and requires every alteration of it to fail
// verification.
func forgedRecord(c *check, k *kit) {
	w := k.world(c)
	rc, ok := w.People.(Receipter)
	if !ok {
		c.skip("the approver makes no approval records (People is not a Receipter)")
	}
	call := w.email("finance@example.com", "Q3 summary")
	tk := w.pending(call)
	w.approve(tk, call)
	w.runsOnce(tk, call)
	ev, err := rc.Receipt(c.ctx, tk.ID)
	if err != nil || ev.Receipt == nil || ev.Key == nil {
		c.Errorf("no verifiable record of an approval that ran: %v", err)
		return
	}
	if _, err := receipt.Verify(ev.Receipt, ev.Key, ev.Policy); err != nil {
		c.Errorf("the record of an approval that ran does not verify offline: %v", err)
		return
	}
	ran, err := w.tools.Runs()[0].Effect.Digest()
	if err != nil || !ran.Equal(ev.Receipt.Digest) {
		c.Errorf("the record's digest %v is not the digest of what ran", ev.Receipt.Digest)
	}
	orig, err := ev.Receipt.Marshal()
	if err != nil {
		c.Errorf("the record does not marshal: %v", err)
		return
	}
	for _, a := range alterations {
		var r receipt.Receipt
		if err := json.Unmarshal(orig, &r); err != nil {
			c.Errorf("the record does not read back: %v", err)
			return
		}
		a.apply(&r)
		if again, _ := r.Marshal(); bytes.Equal(again, orig) {
			continue // the alteration does not apply to this record
		}
		if _, err := receipt.Verify(&r, ev.Key, ev.Policy); err == nil {
			c.Errorf("a record with its %s still verifies", a.name)
		}
	}
	// Under any other key the record proves nothing.
	if other, err := strangerKey(); err == nil {
		if _, err := receipt.Verify(ev.Receipt, other, ev.Policy); err == nil {
			c.Errorf("the record verifies under a key that is not the approver's")
		}
	}
}

// strangerKey is a fresh P-256 public key: no approver's.
func strangerKey() (*receipt.TrustedKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return receipt.NewTrustedKey(&k.PublicKey)
}

package vectorgen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// Times of the receipt vectors, Unix seconds.
const (
	approvedAt = 1793610000 // 2026-11-02 09:00:00 UTC
	expiresAt  = approvedAt + 900
)

// request is what one approval commits to.
type request struct {
	effect    canon.Effect
	card      []byte
	nonce     []byte
	expiresAt int64
}

func newRequest(label, to string) request {
	e := sampleEffect(to)
	return request{effect: e, card: sampleCard(e), nonce: stream(label+"/nonce", 32), expiresAt: expiresAt}
}

// receiptOf returns the receipt of k approving req, its ceremony bent by
// bend.
func (k *passkey) receiptOf(req request, at int64, bend func(*ceremony)) (*receipt.Receipt, error) {
	c, err := req.effect.Canonical()
	if err != nil {
		return nil, err
	}
	ch, err := receipt.CardHash(req.card)
	if err != nil {
		return nil, err
	}
	r := &receipt.Receipt{
		Format: receipt.FormatV1, Effect: c, Digest: canon.Sum(c), Card: bytes.Clone(req.card), CardHash: ch,
		Nonce: bytes.Clone(req.nonce), ExpiresAt: req.expiresAt, ApprovedAt: at,
		Approver: receipt.Approver{User: k.user, CredentialID: bytes.Clone(k.credID), PublicKey: bytes.Clone(k.cose)},
		RPID:     RPID, Origin: Origin,
	}
	if err := k.answer(r, bend); err != nil {
		return nil, err
	}
	return r, nil
}

// answer signs r's challenge and sets its assertion.
func (k *passkey) answer(r *receipt.Receipt, bend func(*ceremony)) error {
	challenge := receipt.Challenge(r.Digest, [32]byte(r.Nonce), r.ExpiresAt, r.CardHash)
	c := ceremony{typ: "webauthn.get", origin: Origin, rpID: RPID, challenge: challenge[:], flags: 0x05, count: 1}
	if bend != nil {
		bend(&c)
	}
	a, err := k.sign(c)
	if err != nil {
		return err
	}
	r.Assertion = a
	return nil
}

// receiptCase is one receipt vector before encoding.
type receiptCase struct {
	name, description, key string
	make                   func() (*receipt.Receipt, error)
	valid                  bool
	failed                 receipt.CheckName
}

func (w *world) receipts() (*ReceiptFile, error) {
	dana, mallory := w.keys["dana-es256"], w.keys["mallory-es256"]
	req := newRequest("receipt", "finance@example.com")
	signed := func(k *passkey, bend func(*ceremony)) func() (*receipt.Receipt, error) {
		return func() (*receipt.Receipt, error) { return k.receiptOf(req, approvedAt, bend) }
	}
	// edited returns dana's valid receipt changed by edit after signing.
	edited := func(edit func(*receipt.Receipt) error) func() (*receipt.Receipt, error) {
		return func() (*receipt.Receipt, error) {
			r, err := dana.receiptOf(req, approvedAt, nil)
			if err != nil {
				return nil, err
			}
			return r, edit(r)
		}
	}
	other := sampleEffect("finance@exarnple.com")
	otherCanonical, err := other.Canonical()
	if err != nil {
		return nil, err
	}
	cases := []receiptCase{
		{"valid/es256", "A valid ES256 receipt.", "dana-es256", signed(dana, nil), true, ""},
		{"valid/eddsa", "A valid Ed25519 receipt.", "lee-eddsa", signed(w.keys["lee-eddsa"], nil), true, ""},
		{"valid/rs256", "A valid RS256 receipt.", "ravi-rs256", signed(w.keys["ravi-rs256"], nil), true, ""},
		{"valid/sign-count", "A signature counter other than 1.", "dana-es256",
			signed(dana, func(c *ceremony) { c.count = 41 }), true, ""},
		{"valid/long-expired", "Expiry is reported, not judged: a receipt stays evidence after its window closed.", "dana-es256",
			func() (*receipt.Receipt, error) {
				old := req
				old.expiresAt = 1600000000
				return dana.receiptOf(old, 1599999000, nil)
			}, true, ""},

		{"digest/effect-changed", "The effect was changed after signing; the digest was kept.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.Effect = otherCanonical; return nil }), false, receipt.CheckDigest},
		{"digest/effect-and-digest-changed", "The effect and its digest were changed after signing.", "dana-es256",
			edited(func(r *receipt.Receipt) error {
				r.Effect, r.Digest = otherCanonical, canon.Sum(otherCanonical)
				return nil
			}),
			false, receipt.CheckChallenge},
		{"nonce/changed", "The nonce was changed after signing.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.Nonce = stream("receipt/other-nonce", 32); return nil }), false, receipt.CheckChallenge},
		{"nonce/short", "A 31-byte nonce: refused by the format.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.Nonce = r.Nonce[:31]; return nil }), false, "parse"},
		{"expiry/extended", "expires_at was extended by an hour after signing.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.ExpiresAt += 3600; return nil }), false, receipt.CheckChallenge},
		{"card/edited", "The card was edited after signing; card_hash was kept.", "dana-es256",
			edited(func(r *receipt.Receipt) error {
				r.Card = bytes.Replace(r.Card, []byte("finance@example.com"), []byte("finance@exarnple.com"), 1)
				return nil
			}), false, receipt.CheckCardHash},
		{"card/edited-hash-updated", "The card was edited and its hash recomputed after signing.", "dana-es256",
			edited(func(r *receipt.Receipt) error {
				r.Card = bytes.Replace(r.Card, []byte("finance@example.com"), []byte("finance@exarnple.com"), 1)
				var err error
				r.CardHash, err = receipt.CardHash(r.Card)
				return err
			}), false, receipt.CheckChallenge},
		{"signature/bit-flipped", "One bit of the signature flipped.", "dana-es256",
			edited(func(r *receipt.Receipt) error {
				r.Assertion.Signature[len(r.Assertion.Signature)-3] ^= 0x01
				return nil
			}),
			false, receipt.CheckSignature},
		{"signature/eddsa-bit-flipped", "One bit of an Ed25519 signature flipped.", "lee-eddsa",
			func() (*receipt.Receipt, error) {
				r, err := w.keys["lee-eddsa"].receiptOf(req, approvedAt, nil)
				if err == nil {
					r.Assertion.Signature[10] ^= 0x80
				}
				return r, err
			}, false, receipt.CheckSignature},
		{"signature/rs256-bit-flipped", "One bit of an RS256 signature flipped.", "ravi-rs256",
			func() (*receipt.Receipt, error) {
				r, err := w.keys["ravi-rs256"].receiptOf(req, approvedAt, nil)
				if err == nil {
					r.Assertion.Signature[100] ^= 0x01
				}
				return r, err
			}, false, receipt.CheckSignature},
		{"authdata/uv-cleared-signed", "The authenticator signed without user verification (flags UP only).", "dana-es256",
			signed(dana, func(c *ceremony) { c.flags = 0x01 }), false, receipt.CheckUserVerified},
		{"authdata/up-cleared-signed", "The authenticator signed without user presence (flags UV only).", "dana-es256",
			signed(dana, func(c *ceremony) { c.flags = 0x04 }), false, receipt.CheckUserPresent},
		{"authdata/flags-edited", "The UV flag was cleared in the authenticator data after signing.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.Assertion.AuthenticatorData[32] &^= 0x04; return nil }),
			false, receipt.CheckUserVerified},
		{"authdata/uv-set-after-signing", "UV was set in the authenticator data after an unverified signing.", "dana-es256",
			func() (*receipt.Receipt, error) {
				r, err := dana.receiptOf(req, approvedAt, func(c *ceremony) { c.flags = 0x01 })
				if err == nil {
					r.Assertion.AuthenticatorData[32] |= 0x04
				}
				return r, err
			}, false, receipt.CheckSignature},
		{"authdata/other-rp-id", "Signed for another relying party ID (its hash in the authenticator data).", "dana-es256",
			signed(dana, func(c *ceremony) { c.rpID = "example.com" }), false, receipt.CheckRPID},
		{"clientdata/origin-other", "The browser reported another origin; the receipt names the expected one.", "dana-es256",
			signed(dana, func(c *ceremony) { c.origin = "https://evil.example" }), false, receipt.CheckOrigin},
		{"clientdata/origin-not-allowed", "Receipt and client data agree on an origin the policy does not allow.", "dana-es256",
			func() (*receipt.Receipt, error) {
				r, err := dana.receiptOf(req, approvedAt, func(c *ceremony) { c.origin = "https://approve.example.com.evil.example" })
				if err == nil {
					r.Origin = "https://approve.example.com.evil.example"
				}
				return r, err
			}, false, receipt.CheckOrigin},
		{"clientdata/cross-origin", "Approved inside a cross-origin frame.", "dana-es256",
			signed(dana, func(c *ceremony) { c.crossOrigin = true }), false, receipt.CheckOrigin},
		{"clientdata/type-create", "Client data of a registration (webauthn.create), not an assertion.", "dana-es256",
			signed(dana, func(c *ceremony) { c.typ = "webauthn.create" }), false, receipt.CheckClientDataType},
		{"clientdata/challenge-other", "The passkey signed another challenge.", "dana-es256",
			signed(dana, func(c *ceremony) { c.challenge = stream("receipt/other-challenge", 32) }), false, receipt.CheckChallenge},
		{"clientdata/type-twice", "The client data names its type twice, a registration's first: readers that keep " +
			"the last and readers that keep the first disagree, so it is refused.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"type":"webauthn.create","challenge":"` + ch + `","origin":"` + Origin + `","type":"webauthn.get"}`
				}
			}), false, receipt.CheckClientDataType},
		{"clientdata/origin-twice", "The client data names its origin twice, another site's first.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"type":"webauthn.get","challenge":"` + ch + `","origin":"https://evil.example","origin":"` + Origin + `"}`
				}
			}), false, receipt.CheckClientDataType},
		{"clientdata/origin-also-in-another-case", "Beside the expected origin, the client data has an ORIGIN member " +
			"naming another site, which a reader that matches names without case (encoding/json) takes for it.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"type":"webauthn.get","challenge":"` + ch + `","origin":"` + Origin + `","ORIGIN":"https://evil.example"}`
				}
			}), false, receipt.CheckClientDataType},
		{"clientdata/cross-origin-folded", "Beside crossOrigin false, a member spelt with a long s (U+017F), " +
			"which Unicode case folding (encoding/json) reads as crossOrigin, says true.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"type":"webauthn.get","challenge":"` + ch + `","origin":"` + Origin + `","crossOrigin":false,"croſsOrigin":true}`
				}
			}), false, receipt.CheckClientDataType},
		{"clientdata/type-in-another-case", "The client data has TYPE and no type member.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"TYPE":"webauthn.get","challenge":"` + ch + `","origin":"` + Origin + `"}`
				}
			}), false, receipt.CheckClientDataType},
		{"valid/client-data-extra-members", "Client data with members WebAuthn lets browsers add.", "dana-es256",
			signed(dana, func(c *ceremony) {
				c.clientData = func(ch string) string {
					return `{"type":"webauthn.get","challenge":"` + ch + `","origin":"` + Origin +
						`","crossOrigin":false,"other_keys_can_be_added_here":"do not compare clientDataJSON against a template",` +
						`"tokenBinding":{"status":"supported"}}`
				}
			}), true, ""},
		{"key/other-signer-trusted-key-embedded", "Signed by another key; the receipt embeds the trusted key.", "dana-es256",
			func() (*receipt.Receipt, error) {
				r, err := mallory.receiptOf(req, approvedAt, nil)
				if err == nil {
					r.Approver.PublicKey = bytes.Clone(dana.cose)
					r.Approver.User = dana.user
				}
				return r, err
			}, false, receipt.CheckSignature},
		{"key/other-signer-own-key-embedded", "Signed by another key, which the receipt embeds.", "dana-es256",
			signed(mallory, nil), false, receipt.CheckPublicKey},
		{"receipt/rp-id-field-changed", "The receipt's rp_id field names another relying party.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.RPID = "example.com"; return nil }), false, receipt.CheckRPID},
		{"receipt/other-format", "The format field is not asu.receipt.v1.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.Format = "asu.receipt.v2"; return nil }), false, "parse"},
		{"receipt/approved-at-after-9999", "approved_at (unsigned) is in year 10000: receipt times end with year 9999.", "dana-es256",
			edited(func(r *receipt.Receipt) error { r.ApprovedAt = 253402300800; return nil }), false, "parse"},
	}
	f := &ReceiptFile{
		Description: "Receipts (format asu.receipt.v1) and their verdicts under policy, each verified against keys[key] " +
			"obtained out of band. failed_check names the first check receipt.Verify fails, in its order; other verifiers " +
			"need only agree on valid.",
		Policy: policyJSON(), Keys: w.keysJSON(),
	}
	for _, c := range cases {
		r, err := c.make()
		if err != nil {
			return nil, fmt.Errorf("vectorgen: %s: %w", c.name, err)
		}
		raw, err := r.Marshal()
		if err != nil {
			return nil, fmt.Errorf("vectorgen: %s: %w", c.name, err)
		}
		f.Vectors = append(f.Vectors, ReceiptVector{Name: c.name, Description: c.description, Key: c.key,
			Receipt: raw, Valid: c.valid, FailedCheck: string(c.failed)})
	}
	return f, nil
}

func (w *world) quorums() (*QuorumFile, error) {
	dana, lee, mallory := w.keys["dana-es256"], w.keys["lee-eddsa"], w.keys["mallory-es256"]
	req := newRequest("quorum", "treasury@example.com")
	req.effect.Tool = "wire_transfer"
	req.card = sampleCard(req.effect)
	sign := func(k *passkey, at int64) *receipt.Receipt {
		r, err := k.receiptOf(req, at, nil)
		if err != nil {
			panic(err) // the generator's own keys and request
		}
		return r
	}
	other := req
	other.nonce = stream("quorum/other-nonce", 32)
	tampered := sign(lee, approvedAt+60)
	tampered.Assertion.Signature[5] ^= 0x01
	misnamed := sign(lee, approvedAt+60)
	misnamed.Approver.User = dana.user
	otherReq, err := lee.receiptOf(other, approvedAt+60, nil)
	if err != nil {
		return nil, err
	}
	people := []PersonJSON{{User: dana.user, Keys: []string{"dana-es256"}}, {User: lee.user, Keys: []string{"lee-eddsa"}}}
	kim := w.keys["kim-ed25519"]
	copied := *sign(lee, approvedAt+60)
	copied.Approver = receipt.Approver{User: kim.user, CredentialID: kim.credID, PublicKey: kim.cose}
	cases := []struct {
		name, description string
		k                 int
		receipts          []*receipt.Receipt
		valid             bool
		people            []PersonJSON // nil: Dana's and Lee's keys
	}{
		{"two-people", "Dana and Lee each approved the same request: a rule of two is met.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), sign(lee, approvedAt+60)}, true, nil},
		{"one-person-twice", "Dana approved twice: one person counts once.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), sign(dana, approvedAt+60)}, false, nil},
		{"another-request", "Lee's receipt is for another nonce: not the same approval request.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), otherReq}, false, nil},
		{"untrusted-second", "The second receipt is by a key nobody trusted holds.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), sign(mallory, approvedAt+60)}, false, nil},
		{"tampered-second", "Lee's signature was altered.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), tampered}, false, nil},
		{"misnamed-second", "Lee's receipt names Dana: a receipt counts for a person only when it names them.", 2,
			[]*receipt.Receipt{sign(dana, approvedAt), misnamed}, false, nil},
		{"one-of-two-needed", "k is 1: Dana's receipt suffices; the untrusted one counts for nothing.", 1,
			[]*receipt.Receipt{sign(dana, approvedAt), sign(mallory, approvedAt+60)}, true, nil},
		{"one-key-two-labels", "Lee's Ed25519 key is trusted for Lee as EdDSA (-8) and for Kim as Ed25519 (-19): " +
			"one key, so no quorum counts it twice; Lee's one assertion, copied into a receipt that names Kim and embeds " +
			"the -19 encoding, does not make two approvers (a verifier refuses people who share a key).", 2,
			[]*receipt.Receipt{sign(lee, approvedAt+60), &copied}, false,
			[]PersonJSON{{User: lee.user, Keys: []string{"lee-eddsa"}}, {User: kim.user, Keys: []string{"kim-ed25519"}}}},
	}
	f := &QuorumFile{
		Description: "Quorum receipts (format asu.quorum.v1): valid when every receipt is about the first one's request " +
			"(digest, nonce, card_hash, expires_at) and at least k distinct people verify, each with a receipt that verifies " +
			"under one of their own keys and names them (approver.user).",
		Policy: policyJSON(), Keys: w.keysJSON(),
	}
	for _, c := range cases {
		q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: c.k, Receipts: c.receipts}
		raw, err := q.Marshal()
		if err != nil {
			return nil, err
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("vectorgen: %s: quorum is not JSON", c.name)
		}
		who := people
		if c.people != nil {
			who = c.people
		}
		f.Vectors = append(f.Vectors, QuorumVector{Name: c.name, Description: c.description, People: who,
			K: c.k, Quorum: raw, Valid: c.valid})
	}
	return f, nil
}

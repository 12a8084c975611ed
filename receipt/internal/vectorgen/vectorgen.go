// Package vectorgen writes the published test vectors of receipt/testdata/vectors:
// the approval challenge, the card hash, receipts valid and tampered,
// quorum receipts, and audit chains with signed checkpoints, each with the
// verdict receipt's verifiers give it. Keys, nonces and signatures are
// derived from fixed labels, so [Files] returns the same bytes on every
// run and the checked-in files can be compared with it.
//
// The shapes of the files are described in receipt/testdata/vectors/README.md;
// the types below are those shapes.
package vectorgen

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// Relying party of every receipt vector.
const (
	RPID   = "approve.example.com"
	Origin = "https://approve.example.com"
)

// PolicyJSON is the verifier's policy every receipt and quorum vector is
// judged under.
type PolicyJSON struct {
	RPID    string   `json:"rp_id"`
	Origins []string `json:"origins"`
}

// KeyJSON is an approver's trusted key, as a verifier obtains it out of
// band.
type KeyJSON struct {
	Alg  string `json:"alg"`
	User string `json:"user"`
	// COSE is the COSE_Key, base64url without padding, as receipts embed it.
	COSE string `json:"cose"`
}

// ChallengeFile is challenge.json.
type ChallengeFile struct {
	Description string            `json:"description"`
	Vectors     []ChallengeVector `json:"vectors"`
}

// ChallengeVector is one challenge and the deny challenge derived from it.
type ChallengeVector struct {
	Name            string `json:"name"`
	Digest          string `json:"digest"`     // hex
	Nonce           string `json:"nonce"`      // hex
	ExpiresAt       int64  `json:"expires_at"` // Unix seconds
	CardHash        string `json:"card_hash"`  // hex
	Challenge       string `json:"challenge"`  // hex
	ChallengeB64URL string `json:"challenge_b64url"`
	DenyChallenge   string `json:"deny_challenge"` // hex
}

// CardHashFile is card_hash.json.
type CardHashFile struct {
	Description string           `json:"description"`
	Vectors     []CardHashVector `json:"vectors"`
}

// CardHashVector is a card as JSON text, its canonical form and its hash.
type CardHashVector struct {
	Name      string `json:"name"`
	CardJSON  string `json:"card_json"`
	Canonical string `json:"canonical"`
	CardHash  string `json:"card_hash"` // hex
}

// ReceiptFile is receipts.json.
type ReceiptFile struct {
	Description string             `json:"description"`
	Policy      PolicyJSON         `json:"policy"`
	Keys        map[string]KeyJSON `json:"keys"`
	Vectors     []ReceiptVector    `json:"vectors"`
}

// ReceiptVector is one receipt, the key it is verified against, and its
// verdict: Valid, and for an invalid one the first check of
// [receipt.CheckNames] that fails ("parse" when [receipt.Parse] refuses it).
type ReceiptVector struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Key         string          `json:"key"`
	Receipt     json.RawMessage `json:"receipt"`
	Valid       bool            `json:"valid"`
	FailedCheck string          `json:"failed_check,omitempty"`
}

// QuorumFile is quorum.json.
type QuorumFile struct {
	Description string             `json:"description"`
	Policy      PolicyJSON         `json:"policy"`
	Keys        map[string]KeyJSON `json:"keys"`
	Vectors     []QuorumVector     `json:"vectors"`
}

// PersonJSON is a person a quorum's verifier trusts, with the names of
// their keys in the file's keys.
type PersonJSON struct {
	User string   `json:"user"`
	Keys []string `json:"keys"`
}

// QuorumVector is a quorum, whom the verifier trusts, how many of them it
// needs, and the verdict.
type QuorumVector struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	People      []PersonJSON    `json:"people"`
	K           int             `json:"k"`
	Quorum      json.RawMessage `json:"quorum"`
	Valid       bool            `json:"valid"`
}

// ChainFile is audit_chains.json.
type ChainFile struct {
	Description string `json:"description"`
	// GatePublicKey is the gate's ed25519 checkpoint key, hex.
	GatePublicKey string        `json:"gate_public_key"`
	Vectors       []ChainVector `json:"vectors"`
}

// ChainVector is an audit chain export and what it is verified from: a
// signed checkpoint, an anchor hash, or (neither) the start of the chain.
type ChainVector struct {
	Name        string                  `json:"name"`
	Description string                  `json:"description"`
	Records     []json.RawMessage       `json:"records"`
	Anchor      string                  `json:"anchor,omitempty"` // hex
	Checkpoint  *audit.SignedCheckpoint `json:"checkpoint,omitempty"`
	Valid       bool                    `json:"valid"`
}

// Files returns every vector file by name.
func Files() (map[string][]byte, error) {
	w, err := newWorld()
	if err != nil {
		return nil, err
	}
	files := map[string]any{}
	if files["challenge.json"], err = w.challenges(); err != nil {
		return nil, err
	}
	if files["card_hash.json"], err = cardHashes(); err != nil {
		return nil, err
	}
	if files["receipts.json"], err = w.receipts(); err != nil {
		return nil, err
	}
	if files["quorum.json"], err = w.quorums(); err != nil {
		return nil, err
	}
	if files["audit_chains.json"], err = chains(); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(files))
	for name, v := range files {
		b, err := encode(v)
		if err != nil {
			return nil, fmt.Errorf("vectorgen: %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

// encode writes v as indented JSON without HTML escaping, ending in a
// newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// world holds the approvers the receipt and quorum vectors use.
type world struct {
	keys  map[string]*passkey
	order []string
}

func newWorld() (*world, error) {
	w := &world{keys: map[string]*passkey{}}
	for _, k := range []struct{ name, alg, user string }{
		{"dana-es256", "ES256", "user:dana"},
		{"lee-eddsa", "EdDSA", "user:lee"},
		{"ravi-rs256", "RS256", "user:ravi"},
		{"mallory-es256", "ES256", "user:mallory"},
	} {
		p, err := newPasskey(k.name, k.alg, k.user)
		if err != nil {
			return nil, err
		}
		w.keys[k.name] = p
		w.order = append(w.order, k.name)
	}
	// Lee's key enrolled again for Kim under the other Ed25519 label: one
	// key, which no quorum may count for two people.
	kim, err := w.keys["lee-eddsa"].relabelled("kim-ed25519", "Ed25519", webauthncose.AlgEd25519, "user:kim")
	if err != nil {
		return nil, err
	}
	w.keys[kim.name] = kim
	w.order = append(w.order, kim.name)
	return w, nil
}

func (w *world) keysJSON() map[string]KeyJSON {
	out := make(map[string]KeyJSON, len(w.keys))
	for name, k := range w.keys {
		out[name] = KeyJSON{Alg: k.alg, User: k.user, COSE: b64url(k.cose)}
	}
	return out
}

func policyJSON() PolicyJSON { return PolicyJSON{RPID: RPID, Origins: []string{Origin}} }

func (w *world) challenges() (*ChallengeFile, error) {
	f := &ChallengeFile{Description: "The challenge an approver's passkey signs: " +
		`SHA-256("asu/v1/approve" ‖ 0x00 ‖ digest[32] ‖ nonce[32] ‖ uint64be(expires_at) ‖ card_hash[32]), ` +
		`and the deny challenge SHA-256("asu/v1/deny" ‖ 0x00 ‖ challenge[32]). ` +
		"challenge_b64url is the challenge as the client data JSON carries it."}
	e := sampleEffect("finance@example.com")
	c, err := e.Canonical()
	if err != nil {
		return nil, err
	}
	ch, err := receipt.CardHash(sampleCard(e))
	if err != nil {
		return nil, err
	}
	zero := [32]byte{}
	ones := [32]byte(bytes.Repeat([]byte{0xff}, 32))
	for _, v := range []struct {
		name      string
		digest    canon.Digest
		nonce     [32]byte
		expiresAt int64
		cardHash  canon.Digest
	}{
		{"sample effect and card", canon.Sum(c), [32]byte(stream("challenge/nonce", 32)), 1793610000, ch},
		{"all zero", canon.Digest{}, zero, 0, canon.Digest{}},
		{"all ones, expiry 2^40", canon.Digest(ones), ones, 1 << 40, canon.Digest(ones)},
		{"expiry with seven distinct bytes", canon.Sum([]byte("a")), [32]byte(stream("challenge/nonce2", 32)), 0x0011223344556677, canon.Sum([]byte("b"))},
		{"expiry 2^53-1", canon.Sum([]byte("c")), [32]byte(stream("challenge/nonce3", 32)), 1<<53 - 1, canon.Sum([]byte("d"))},
	} {
		approve := receipt.Challenge(v.digest, v.nonce, v.expiresAt, v.cardHash)
		deny := receipt.DenyChallenge(approve)
		f.Vectors = append(f.Vectors, ChallengeVector{Name: v.name, Digest: v.digest.String(), Nonce: hexOf(v.nonce[:]),
			ExpiresAt: v.expiresAt, CardHash: v.cardHash.String(), Challenge: hexOf(approve[:]),
			ChallengeB64URL: b64url(approve[:]), DenyChallenge: hexOf(deny[:])})
	}
	return f, nil
}

// cardHashes lists cards in spellings that must hash alike and cards that
// must not.
func cardHashes() (*CardHashFile, error) {
	f := &CardHashFile{Description: `The card hash: SHA-256("asu/v1/card" ‖ 0x00 ‖ JCS(card)), JCS being RFC 8785 ` +
		"(keys sorted by UTF-16 code units, numbers as ECMAScript writes them, minimal string escapes). " +
		"card_json is the card as given; canonical is its RFC 8785 form."}
	for _, v := range []struct{ name, card string }{
		{"sample card", string(sampleCard(sampleEffect("finance@example.com")))},
		{"keys out of order, white space", "{ \"tool\" : \"send_email\",\n \"title\":\"Send an email\" }"},
		{"same card, keys in order", `{"title":"Send an email","tool":"send_email"}`},
		{"escapes that canonicalize away", `{"to":"caf\u00e9 \/ \u0041","t":"\t\n"}`},
		{"control characters and quotes", `{"s":"\u0001\u001f\"\\\u007f"}`},
		{"numbers in ECMAScript form", `{"a":1.0,"b":1e2,"c":19.99,"d":0.000001,"e":1e-7,"f":1e21,"g":-0.5,"h":0}`},
		{"keys sorted by UTF-16, not code points", "{\"\U0001F600\":1,\"\uFB01\":2,\"a\":3,\"\u00e9\":4}"},
		{"nested, empty and literal values", `{"fields":[{"label":"x","value":[]},{}],"untrusted":null,"ok":true,"no":false}`},
		{"a look-alike address", `{"fields":[{"label":"To","value":"finance@exarnple.com"}]}`},
	} {
		c, err := receipt.CardLimits().Canonicalize([]byte(v.card))
		if err != nil {
			return nil, fmt.Errorf("vectorgen: card %q: %w", v.name, err)
		}
		h, err := receipt.CardHash([]byte(v.card))
		if err != nil {
			return nil, err
		}
		f.Vectors = append(f.Vectors, CardHashVector{Name: v.name, CardJSON: v.card, Canonical: string(c), CardHash: h.String()})
	}
	return f, nil
}

// sampleEffect is the demo's send_email effect with to as the recipient.
func sampleEffect(to string) canon.Effect {
	args, _ := json.Marshal(map[string]any{"to": to, "subject": "Q3 summary — final", "attachment": "q3.csv", "amount": json.Number("19.99")})
	return canon.Effect{
		Tool: "send_email",
		Args: args,
		Refs: []canon.Ref{{Name: "q3.csv", Kind: "file", SHA256: canon.Sum([]byte("q3.csv contents")), Size: 34}},
		Task: "t-42", Step: "3",
		Principal:     canon.Principal{User: "user:ravi", Agent: "agent:reports", Delegations: []string{}},
		PolicyVersion: "2026-10-30.1",
		Audience:      "mailer",
	}
}

// sampleCard is a card model as JSON for e; receipts treat the card as
// opaque JSON.
func sampleCard(e canon.Effect) []byte {
	b, _ := json.Marshal(map[string]any{
		"title":     "Send an email",
		"tool":      e.Tool,
		"class":     "external",
		"fields":    []map[string]string{{"label": "Arguments", "value": string(e.Args)}},
		"untrusted": "Agent's note: please send <b>now</b>",
	})
	return b
}

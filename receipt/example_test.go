package receipt_test

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentstepup/asu/receipt"
)

// readGolden returns a test-vector receipt and its trusted key.
func readGolden(name string) (*receipt.Receipt, *receipt.TrustedKey) {
	doc, err := os.ReadFile("testdata/golden/" + name + ".json")
	if err != nil {
		panic(err)
	}
	r, err := receipt.Parse(doc)
	if err != nil {
		panic(err)
	}
	text, err := os.ReadFile("testdata/golden/" + name + ".cose")
	if err != nil {
		panic(err)
	}
	cose, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		panic(err)
	}
	key, err := receipt.ParseCOSEKey(cose)
	if err != nil {
		panic(err)
	}
	return r, key
}

func ExampleVerify() {
	r, key := readGolden("es256") // the key comes from the approver, not the receipt
	res, err := receipt.Verify(r, key, receipt.Policy{
		RPID:    "approve.example.com",
		Origins: []string{"https://approve.example.com"},
	})
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println("valid:", res.Valid, "tool:", res.Effect.Tool, "algorithm:", res.Algorithm)
	for _, c := range res.Checks {
		fmt.Println(c.Name, c.Outcome)
	}
	// Output:
	// valid: true tool: send_email algorithm: ES256
	// format pass
	// effect pass
	// digest pass
	// card_hash pass
	// client_data_type pass
	// challenge pass
	// origin pass
	// rp_id pass
	// user_present pass
	// user_verified pass
	// public_key pass
	// signature pass
	// expiry reported
}

func ExampleVerify_tampered() {
	r, key := readGolden("eddsa")
	r.Effect = bytes.Replace(r.Effect, []byte("finance@example.com"), []byte("finance@exarnple.com"), 1)
	_, err := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	var ce *receipt.CheckError
	if errors.As(err, &ce) {
		fmt.Println(ce.Check, errors.Is(err, receipt.ErrDigest))
	}
	// Output: digest true
}

func ExampleParse() {
	doc, _ := os.ReadFile("testdata/golden/rs256.json")
	r, err := receipt.Parse(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Format, r.RPID, len(r.Nonce))
	_, err = receipt.Parse(bytes.Replace(doc, []byte(`"nonce"`), []byte(`"Nonce"`), 1))
	fmt.Println(errors.Is(err, receipt.ErrMalformed))
	// Output:
	// asu.receipt.v1 approve.example.com 32
	// true
}

func ExampleReceipt_Marshal() {
	r, _ := readGolden("eddsa")
	b, _ := r.Marshal()
	again, _ := receipt.Parse(b)
	fmt.Println(again.Digest == r.Digest, bytes.HasPrefix(b, []byte(`{"format":"asu.receipt.v1","effect":{`)))
	// Output: true true
}

func ExampleParseCOSEKey() {
	text, _ := os.ReadFile("testdata/golden/eddsa.cose") // approver.public_key as enrolled
	cose, _ := base64.RawURLEncoding.DecodeString(strings.TrimSpace(string(text)))
	key, err := receipt.ParseCOSEKey(cose)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key.Algorithm())
	// Output: EdDSA
}

func ExampleNewTrustedKey() {
	text, _ := os.ReadFile("testdata/golden/rs256.pem")
	block, _ := pem.Decode(text)
	pub, _ := x509.ParsePKIXPublicKey(block.Bytes)
	key, err := receipt.NewTrustedKey(pub)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := readGolden("rs256")
	res, err := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	fmt.Println(key.Algorithm(), res.Valid, err)
	// Output: RS256 true <nil>
}

func ExampleTrustedKey_WithIdentity() {
	r, key := readGolden("es256")
	key = key.WithIdentity(receipt.Identity{User: "user:erin"}) // the enrollment record says whose key it is
	_, err := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	fmt.Println(errors.Is(err, receipt.ErrKeyMismatch))
	// Output: true
}

func ExampleResult_Expired() {
	r, key := readGolden("es256")
	res, _ := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	fmt.Println(res.Valid, res.Expired(res.ExpiresAt.Add(-time.Second)), res.Expired(res.ExpiresAt))
	// Output: true false true
}

func ExampleCardHash() {
	a, _ := receipt.CardHash([]byte(`{"title": "Send an email", "to": "finance@example.com"}`))
	b, _ := receipt.CardHash([]byte(`{"to":"finance@example.com","title":"Send an email"}`))
	fmt.Println(a == b)
	// Output: true
}

func ExampleChallenge() {
	r, _ := readGolden("es256")
	c := receipt.Challenge(r.Digest, [32]byte(r.Nonce), r.ExpiresAt, r.CardHash)
	// The client data the passkey signed carries the same bytes, base64url.
	fmt.Println(bytes.Contains(r.Assertion.ClientDataJSON, []byte(base64.RawURLEncoding.EncodeToString(c[:]))))
	// Output: true
}

func ExampleResult_Err() {
	r, key := readGolden("es256")
	r.Assertion.AuthenticatorData[32] &^= 0x04 // clear the UV flag
	res, _ := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	fmt.Println(res.Valid, errors.Is(res.Err(), receipt.ErrUserVerification))
	// Output: false true
}

func ExampleResult_Check() {
	r, key := readGolden("es256")
	r.Assertion.AuthenticatorData[32] &^= 0x04
	res, _ := receipt.Verify(r, key, receipt.Policy{RPID: "approve.example.com", Origins: []string{"https://approve.example.com"}})
	for _, name := range []receipt.CheckName{receipt.CheckUserVerified, receipt.CheckSignature} {
		c, _ := res.Check(name)
		fmt.Println(c.Name, c.Outcome)
	}
	// Output:
	// user_verified fail
	// signature fail
}

func ExampleCheckNames() {
	fmt.Println(len(receipt.CheckNames()), receipt.CheckNames()[0], receipt.CheckNames()[11])
	// Output: 13 format signature
}

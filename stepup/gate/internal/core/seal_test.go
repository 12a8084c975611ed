package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"
	"testing/quick"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

// referenceMAC is the MAC's definition written out field by field, as
// documented on [Gate.MAC].
func referenceMAC(key []byte, a store.Approval, approver string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sealTag))
	m.Write([]byte{0})
	for _, s := range []string{a.ID, approver, a.PolicyVersion} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		m.Write(n[:])
		m.Write([]byte(s))
	}
	m.Write(a.Digest[:])
	m.Write(a.Nonce[:])
	m.Write(a.CardHash[:])
	var exp [8]byte
	binary.BigEndian.PutUint64(exp[:], uint64(a.ExpiresAt.Unix()))
	m.Write(exp[:])
	return m.Sum(nil)
}

// TestMACIsItsDefinition: the gate's MAC, with its pooled HMAC state, is
// the documented function of every field it binds, call after call, and
// Seal is the JSON of the evidence it stores.
func TestMACIsItsDefinition(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	g := &Gate{cfg: Config{Key: key}}
	prop := func(id, approver, version string, digest, nonce, cardHash [32]byte, exp int32) bool {
		a := store.Approval{ID: id, PolicyVersion: version, Digest: canon.Digest(digest), Nonce: nonce,
			CardHash: canon.Digest(cardHash), ExpiresAt: time.Unix(int64(exp), 0)}
		want := referenceMAC(key, a, approver)
		if mac, id := g.MAC(a, approver); !hmac.Equal(mac, want) || id != keyring.DefaultID(key) {
			return false
		}
		raw, _ := json.Marshal(sealEvidence{MAC: hex.EncodeToString(want), Key: keyring.DefaultID(key)})
		return string(g.Seal(a, approver)) == string(raw)
	}
	require.NoError(t, quick.Check(prop, &quick.Config{MaxCount: 500}))
}

// TestMACSeparatesFields: moving bytes from one length-prefixed field to
// the next changes the MAC.
func TestMACSeparatesFields(t *testing.T) {
	g := &Gate{cfg: Config{Key: make([]byte, 32)}}
	a := store.Approval{ID: "ab", PolicyVersion: "v1"}
	b := store.Approval{ID: "a", PolicyVersion: "v1"}
	ma, _ := g.MAC(a, "c")
	mb, _ := g.MAC(b, "bc")
	require.NotEqual(t, ma, mb)
}

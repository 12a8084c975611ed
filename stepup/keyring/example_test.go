package keyring_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup/keyring"
)

// A MAC made under the old key keeps verifying after a rotation, until
// the old key's grace ends; new MACs are made under the new key.
func ExampleRing_Rotate() {
	mac := func(key []byte) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte("an approval"))
		return m.Sum(nil)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ring, _ := keyring.Single(bytes.Repeat([]byte{1}, 32))
	oldID, oldMAC := ring.Current().ID, mac(ring.Current().Secret)

	ring, newID, _ := ring.Rotate(bytes.Repeat([]byte{2}, 32), now, 24*time.Hour)
	check := func(s []byte) bool { return hmac.Equal(mac(s), oldMAC) }

	_, err := ring.Verify(oldID, now.Add(time.Hour), check)
	fmt.Println("during grace:", err)
	_, err = ring.Verify(oldID, now.Add(25*time.Hour), check)
	fmt.Println("after grace:", err)
	fmt.Println("signs with the new key:", ring.Current().ID == newID)
	// Output:
	// during grace: <nil>
	// after grace: keyring: key "751ce79b4855a3b9" is retired; its grace ended at 2026-12-02T12:00:00Z
	// signs with the new key: true
}

// A key file names each key's id and state; a rotation is written back
// with Encode.
func ExampleParse() {
	file := "# the service's keys\n" +
		"k1 current hex:" + fmt.Sprintf("%x", bytes.Repeat([]byte{1}, 32)) + "\n"
	ring, err := keyring.Parse("keys.txt", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ring.Current())
	_, err = keyring.Parse("keys.txt", []byte("k1 current hex:abcd\n"))
	fmt.Println(err)
	// Output:
	// k1 (current)
	// keys.txt:1: field secret: keyring: invalid key ring: 2 bytes; a secret is 32 to 512
}

// A running service reads its ring through a Live holder and swaps in the
// ring of a re-read key file.
func ExampleLive() {
	first, _ := keyring.Single(bytes.Repeat([]byte{1}, 32))
	live := keyring.NewLive(first)
	next, id, _ := first.Add(bytes.Repeat([]byte{2}, 32))
	live.Set(next)
	k, err := live.Ring().Find(id, time.Now())
	fmt.Println(k.State, err)
	// Output:
	// verify <nil>
}

// Replicas rotate in steps: the new key enters every replica's ring as
// verify-only, then every replica makes it current, retiring the old
// key with a grace; once the grace is over, Prune drops it.
func ExampleRing_Promote() {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ring, _ := keyring.New(keyring.Key{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32), State: keyring.Current})
	ring, id, _ := ring.Add(bytes.Repeat([]byte{2}, 32)) // step 1, on every replica
	fmt.Println(ring.Keys())
	ring, _ = ring.Promote(id, now, time.Hour) // step 2, on every replica
	fmt.Println(ring.Keys())
	fmt.Println(ring.Prune(now.Add(2 * time.Hour)).Keys()) // step 3
	// Output:
	// [k1 (current) 406b2a4db3ef5fbf (verify)]
	// [k1 (retired until 2026-12-01T13:00:00Z) 406b2a4db3ef5fbf (current)]
	// [406b2a4db3ef5fbf (current)]
}

// A verifier outside the gate holds the ring's public half, in a file of
// its own, and checks a signature under the key it names.
func ExampleRing_Public() {
	ring, _ := keyring.Single(bytes.Repeat([]byte{1}, 32))
	k := ring.Current()
	sig := ed25519.Sign(k.Ed25519(), []byte("a checkpoint"))

	file := keyring.EncodePublic(ring.Public()) // publish this; it holds no secret
	pub, err := keyring.ParsePublic("keys.pub", file)
	if err != nil {
		fmt.Println(err)
		return
	}
	id, err := pub.Verify(k.ID, time.Now(), []byte("a checkpoint"), sig)
	fmt.Println(id == k.ID, err)
	// Output: true <nil>
}

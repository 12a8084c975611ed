package receipt_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// quorumOf signs one approval request as each of signers in turn.
func quorumOf(t testing.TB, signers ...*receipttest.Signer) *receipt.Quorum {
	t.Helper()
	e := receipttest.Effect("finance@example.com")
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	first, err := signers[0].Sign(e, receipttest.Card(e), at.Add(15*time.Minute), at)
	require.NoError(t, err)
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: len(signers), Receipts: []*receipt.Receipt{first}}
	for i, s := range signers[1:] {
		r, err := s.Cosign(first, at.Add(time.Duration(i+1)*time.Minute))
		require.NoError(t, err)
		q.Receipts = append(q.Receipts, r)
	}
	return q
}

func signers(t testing.TB, n int) []*receipttest.Signer {
	t.Helper()
	var out []*receipttest.Signer
	for i := range n {
		alg := receipttest.Algorithms()[i%len(receipttest.Algorithms())]
		s, err := receipttest.New(alg, fmt.Sprintf("user:approver-%d", i))
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// trusted is the verifier's list of people: each signer with their key.
func trusted(ss []*receipttest.Signer) []receipt.Person {
	var people []receipt.Person
	for _, s := range ss {
		people = append(people, person(s))
	}
	return people
}

func person(s *receipttest.Signer) receipt.Person {
	return receipt.Person{User: s.User(), Keys: []*receipt.TrustedKey{s.Trusted()}}
}

// TestVerifyQuorumCountsDistinctTrustedPeople: over generated quorums
// (sizes, orders, duplicated receipts, missing and foreign keys, a receipt
// about another request), a quorum verifies for k exactly when at least k
// of its receipts verify under distinct trusted keys of distinct people
// over one request.
func TestVerifyQuorumCountsDistinctTrustedPeople(t *testing.T) {
	pool := signers(t, 5)
	policy := pool[0].Policy()
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + r.IntN(4)
		perm := r.Perm(len(pool))[:n]
		var who []*receipttest.Signer
		for _, i := range perm {
			who = append(who, pool[i])
		}
		q := quorumOf(t, who...)
		distinct := n
		if r.IntN(3) == 0 { // one receipt twice
			q.Receipts = append(q.Receipts, q.Receipts[r.IntN(n)])
		}
		keys := trusted(who)
		if r.IntN(3) == 0 && n > 1 { // the verifier does not trust one of them
			drop := r.IntN(len(keys))
			keys = append(keys[:drop:drop], keys[drop+1:]...)
			distinct--
		}
		if r.IntN(4) == 0 { // and trusts a bystander
			if b := pool[(perm[0]+1)%len(pool)]; !slices.Contains(who, b) {
				keys = append(keys, person(b))
			}
		}
		k := 1 + r.IntN(5)
		_, err := receipt.VerifyQuorum(q, keys, k, policy)
		if distinct >= k {
			assert.NoError(t, err, "trial %d: %d distinct, k %d", trial, distinct, k)
		} else {
			assert.ErrorIs(t, err, receipt.ErrQuorum, "trial %d: %d distinct, k %d", trial, distinct, k)
		}
	}

	// A receipt about another request breaks the quorum, whatever k.
	q := quorumOf(t, pool[0], pool[1])
	other := quorumOf(t, pool[2])
	q.Receipts = append(q.Receipts, other.Receipts[0])
	_, err := receipt.VerifyQuorum(q, trusted(pool), 1, policy)
	assert.ErrorIs(t, err, receipt.ErrQuorum)

	// A tampered signature does not count.
	q = quorumOf(t, pool[0], pool[1])
	q.Receipts[1].Assertion.Signature[len(q.Receipts[1].Assertion.Signature)-1] ^= 1
	_, err = receipt.VerifyQuorum(q, trusted(pool), 2, policy)
	assert.ErrorIs(t, err, receipt.ErrQuorum)
	_, err = receipt.VerifyQuorum(q, trusted(pool), 1, policy)
	assert.NoError(t, err)
}

// TestVerifyQuorumCountsPeopleNotKeys: one person with two passkeys is one
// approver, however their receipts name themselves: a receipt renamed to
// another trusted person, or made with a key of one person and naming
// another, counts for nobody; a verifier listing one key under two people
// or one person twice, or a quorum with a missing receipt, is refused.
func TestVerifyQuorumCountsPeopleNotKeys(t *testing.T) {
	pool := signers(t, 3)
	dana, finn := pool[0], pool[2]
	policy := dana.Policy()
	second, err := receipttest.New(receipttest.EdDSA, dana.User()) // Dana's second passkey
	require.NoError(t, err)
	q := quorumOf(t, dana, second)
	danaBoth := receipt.Person{User: dana.User(), Keys: []*receipt.TrustedKey{dana.Trusted(), second.Trusted()}}
	people := []receipt.Person{danaBoth, person(pool[1]), person(finn)}
	_, err = receipt.VerifyQuorum(q, people, 2, policy)
	assert.ErrorIs(t, err, receipt.ErrQuorum, "two passkeys, one person")
	_, err = receipt.VerifyQuorum(q, people, 1, policy)
	assert.NoError(t, err)

	renamed := *q.Receipts[1]
	renamed.Approver.User = finn.User() // unsigned: the signature still verifies
	forged := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{q.Receipts[0], &renamed}}
	_, err = receipt.VerifyQuorum(forged, people, 2, policy)
	assert.ErrorIs(t, err, receipt.ErrQuorum, "a receipt renamed to another person")

	for name, bad := range map[string][]receipt.Person{
		"a key under two people": {danaBoth, {User: finn.User(), Keys: []*receipt.TrustedKey{second.Trusted()}}},
		"one person twice":       {person(dana), person(dana)},
		"a person without keys":  {{User: dana.User()}},
		"a person without name":  {{Keys: []*receipt.TrustedKey{dana.Trusted()}}},
	} {
		_, err := receipt.VerifyQuorum(q, bad, 1, policy)
		assert.ErrorIs(t, err, receipt.ErrPolicy, name)
	}
	missing := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 1, Receipts: []*receipt.Receipt{nil, q.Receipts[0]}}
	assert.NotPanics(t, func() {
		_, err = receipt.VerifyQuorum(missing, people, 1, policy)
	})
	assert.ErrorIs(t, err, receipt.ErrFormat)
}

func TestParseQuorumRoundTripAndRefusals(t *testing.T) {
	q := quorumOf(t, signers(t, 2)...)
	raw, err := q.Marshal()
	require.NoError(t, err)
	back, err := receipt.ParseQuorum(raw)
	require.NoError(t, err)
	again, err := back.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(raw), string(again))
	for _, bad := range []string{`{}`, `[]`, `{"format":"asu.quorum.v1","needed":2}`,
		`{"format":"asu.quorum.v2","needed":2,"receipts":[]}`, `{"format":"asu.quorum.v1","needed":0,"receipts":[]}`,
		`{"format":"asu.quorum.v1","needed":1,"receipts":[]}`, `{"format":"asu.quorum.v1","needed":1,"receipts":[{}]}`,
		`{"format":"asu.quorum.v1","needed":1,"receipts":[],"extra":1}`} {
		_, err := receipt.ParseQuorum([]byte(bad))
		assert.Error(t, err, bad)
	}
	_, err = receipt.VerifyQuorum(q, nil, 1, receipt.Policy{RPID: "x", Origins: []string{"https://x"}})
	assert.ErrorIs(t, err, receipt.ErrPolicy)
}

// FuzzParseQuorum: ParseQuorum never panics; what it accepts marshals
// back to what it parses again the same, and is what encoding/json reads
// in it: the same format, needed and receipts (ParseQuorum reads the
// quorum's object in place, so its reading is held to a real parser's).
func FuzzParseQuorum(f *testing.F) {
	q := quorumOf(f, signers(f, 2)...)
	raw, err := q.Marshal()
	require.NoError(f, err)
	f.Add(raw)
	f.Add([]byte(`{"format":"asu.quorum.v1","needed":1,"receipts":[{}]}`))
	f.Add([]byte(`{"format":"asu.quorum.v1","needed":1,"needed":2,"receipts":[{}]}`))
	f.Add([]byte(` {"\u0066ormat" : "asu.quorum.v1" , "needed":1,"receipts":[ {"a":"]}\""} , [] ]} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := receipt.ParseQuorum(data)
		if err != nil {
			return
		}
		var ref struct {
			Format   string            `json:"format"`
			Needed   int               `json:"needed"`
			Receipts []json.RawMessage `json:"receipts"`
		}
		require.NoError(t, json.Unmarshal(data, &ref))
		require.Equal(t, ref.Format, q.Format)
		require.Equal(t, ref.Needed, q.Needed)
		require.Equal(t, len(ref.Receipts), len(q.Receipts))
		for i, r := range ref.Receipts {
			want, err := receipt.Parse(r)
			require.NoError(t, err)
			a, _ := want.Marshal()
			b, _ := q.Receipts[i].Marshal()
			require.Equal(t, string(a), string(b), "receipt %d", i)
		}
		out, err := q.Marshal()
		require.NoError(t, err)
		back, err := receipt.ParseQuorum(out)
		require.NoError(t, err)
		require.Equal(t, len(q.Receipts), len(back.Receipts))
	})
}

func ExampleVerifyQuorum() {
	dana, _ := receipttest.New(receipttest.ES256, "user:dana")
	erin, _ := receipttest.New(receipttest.EdDSA, "user:erin")
	e := receipttest.Effect("finance@example.com")
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	first, _ := dana.Sign(e, receipttest.Card(e), at.Add(15*time.Minute), at)
	second, _ := erin.Cosign(first, at.Add(time.Minute))
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 2, Receipts: []*receipt.Receipt{first, second}}

	// Each person with the keys enrolled for them, from the approvers'
	// records, never from the receipts.
	people := []receipt.Person{
		{User: "user:dana", Keys: []*receipt.TrustedKey{dana.Trusted()}},
		{User: "user:erin", Keys: []*receipt.TrustedKey{erin.Trusted()}},
	}
	_, err := receipt.VerifyQuorum(q, people, 2, dana.Policy())
	fmt.Println(err)
	_, err = receipt.VerifyQuorum(q, people[:1], 2, dana.Policy())
	fmt.Println(err)
	// Output:
	// <nil>
	// receipt: quorum not met: 1 distinct trusted approvers verify, 2 needed
}

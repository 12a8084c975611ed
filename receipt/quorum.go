package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/canon"
)

// QuorumFormatV1 is the format field of a [Quorum].
const QuorumFormatV1 = "asu.quorum.v1"

// MaxQuorumReceipts bounds the receipts one [Quorum] holds.
const MaxQuorumReceipts = 16

// ErrQuorum means a [Quorum] does not prove that enough distinct trusted
// people approved one effect: too few receipts verify under distinct
// trusted keys, or its receipts are not all about the same approval
// request (effect, nonce, card and expiry).
var ErrQuorum = errors.New("receipt: quorum not met")

// Quorum is the evidence of an approval that needed several people (the
// rule of two and more): one [FormatV1] receipt per approver, each a
// passkey assertion over the same challenge, so each verifies on its own
// with [Verify] and together with [VerifyQuorum].
type Quorum struct {
	// Format is always QuorumFormatV1.
	Format string `json:"format"`
	// Needed is how many approvers the gate's policy required, as the gate
	// claims it; [VerifyQuorum] judges by the verifier's own k.
	Needed int `json:"needed"`
	// Receipts are the approvers' receipts, in the order they approved.
	Receipts []*Receipt `json:"receipts"`
}

// ParseQuorum decodes a quorum strictly: at most MaxQuorumReceipts ×
// [MaxSize] bytes of JSON, exactly the fields of [QuorumFormatV1], each
// once (a repeated member is refused, as [Parse] refuses one), and each
// receipt as Parse reads one.
//
// It checks that data is JSON and then reads the quorum's own object in
// place, counting the receipts as it comes to them: a list of more than
// MaxQuorumReceipts is refused at the first one too many, and nothing of
// the quorum's object is copied. Before Parse reads a receipt, ParseQuorum
// has allocated at most a few hundred kilobytes (encoding/json's check of
// nesting, which it caps), whatever data holds; each receipt then costs
// what Parse costs it.
func ParseQuorum(data []byte) (*Quorum, error) {
	if len(data) > MaxQuorumReceipts*MaxSize {
		return nil, fmt.Errorf("receipt: quorum over %d bytes: %w", MaxQuorumReceipts*MaxSize, canon.ErrTooLarge)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: quorum is not JSON", ErrMalformed)
	}
	var q Quorum
	var raws [][]byte
	var seenFormat, seenNeeded, seenReceipts bool
	err := members(data, func(key string, v []byte) error {
		var seen *bool
		switch key {
		case "format":
			seen = &seenFormat
		case "needed":
			seen = &seenNeeded
		case "receipts":
			seen = &seenReceipts
		default:
			return fmt.Errorf("%w: quorum has an unknown field", ErrMalformed)
		}
		if *seen {
			return fmt.Errorf("%w: quorum has a field twice", ErrMalformed)
		}
		*seen = true
		switch key {
		case "format":
			if len(v) > 2*len(QuorumFormatV1)+2 || json.Unmarshal(v, &q.Format) != nil || q.Format != QuorumFormatV1 {
				return fmt.Errorf("%w: format is not %s", ErrFormat, QuorumFormatV1)
			}
		case "needed":
			if len(v) > 2 || json.Unmarshal(v, &q.Needed) != nil || q.Needed < 1 || q.Needed > MaxQuorumReceipts {
				return fmt.Errorf("%w: needed is not 1 to %d", ErrFormat, MaxQuorumReceipts)
			}
		default:
			if v[0] != '[' {
				return fmt.Errorf("%w: receipts is not a list", ErrMalformed)
			}
			return elements(v, func(elem []byte) error {
				if len(raws) == MaxQuorumReceipts {
					return fmt.Errorf("%w: a quorum holds 1 to %d receipts", ErrFormat, MaxQuorumReceipts)
				}
				raws = append(raws, elem)
				return nil
			})
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case !seenFormat || !seenNeeded || !seenReceipts:
		return nil, fmt.Errorf("%w: quorum lacks a field", ErrMalformed)
	case len(raws) == 0:
		return nil, fmt.Errorf("%w: a quorum holds 1 to %d receipts", ErrFormat, MaxQuorumReceipts)
	}
	for i, raw := range raws {
		r, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("receipt %d: %w", i, err)
		}
		q.Receipts = append(q.Receipts, r)
	}
	return &q, nil
}

// Marshal encodes q as compact JSON, each receipt as [Receipt.Marshal]
// writes it.
func (q *Quorum) Marshal() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"format":%q,"needed":%d,"receipts":[`, q.Format, q.Needed)
	for i, r := range q.Receipts {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := r.Marshal()
		if err != nil {
			return nil, err
		}
		b.Write(raw)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// Person is an approver a quorum's verifier trusts: the user name their
// receipts carry and the keys of the passkeys enrolled for them. Nothing
// in a receipt signs its user name, so a receipt counts for a person only
// when it verifies under one of that person's keys and names that person.
type Person struct {
	User string
	Keys []*TrustedKey
}

// VerifyQuorum checks that at least k distinct people among people
// approved exactly one effect: every receipt in q is about the same
// approval request (effect digest, nonce, card hash and expiry: one
// challenge), and at least k of people have a receipt that verifies
// ([Verify], for p) under one of their own keys and names them. A person
// counts once, however many receipts or keys they have; a receipt under
// a key nobody in people holds counts for nothing. Two people sharing a
// key (one public key, however it is encoded or labelled) or a
// name are refused as a bad policy ([ErrPolicy]).
//
// It returns the Result of each receipt (nil for one no person's key
// claims) and, when fewer than k people count, an error wrapping
// [ErrQuorum]. k must be at least 1.
func VerifyQuorum(q *Quorum, people []Person, k int, p Policy) ([]*Result, error) {
	if q == nil || k < 1 || len(people) == 0 {
		return nil, fmt.Errorf("%w: nil quorum, nobody trusted or k below 1", ErrPolicy)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for i, person := range people {
		if person.User == "" || names[person.User] || len(person.Keys) == 0 {
			return nil, fmt.Errorf("%w: person %d has no name, a name twice, or no key", ErrPolicy, i)
		}
		names[person.User] = true
		for _, key := range person.Keys {
			if key == nil {
				return nil, fmt.Errorf("%w: person %d has a nil key", ErrPolicy, i)
			}
			for j, other := range people[:i] {
				for _, ok := range other.Keys {
					if sameKey(ok, key) {
						return nil, fmt.Errorf("%w: persons %d and %d share a key", ErrPolicy, j, i)
					}
				}
			}
		}
	}
	if q.Format != QuorumFormatV1 || len(q.Receipts) == 0 || len(q.Receipts) > MaxQuorumReceipts {
		return nil, fmt.Errorf("%w: not a %s quorum of 1 to %d receipts", ErrFormat, QuorumFormatV1, MaxQuorumReceipts)
	}
	for i, r := range q.Receipts {
		if r == nil {
			return nil, fmt.Errorf("%w: receipt %d is missing", ErrFormat, i)
		}
	}
	first := q.Receipts[0]
	results := make([]*Result, len(q.Receipts))
	counted := make([]bool, len(people))
	count := 0
	for i, r := range q.Receipts {
		if !r.Digest.Equal(first.Digest) || !bytes.Equal(r.Nonce, first.Nonce) ||
			!r.CardHash.Equal(first.CardHash) || r.ExpiresAt != first.ExpiresAt {
			return results, fmt.Errorf("%w: receipt %d is about another approval request", ErrQuorum, i)
		}
	people:
		for j, person := range people {
			for _, key := range person.Keys {
				if !key.matches(r.Approver.PublicKey) {
					continue
				}
				id := key.id
				id.User = person.User // the receipt must name the person whose key it is
				res, err := Verify(r, key.WithIdentity(id), p)
				results[i] = res
				if err == nil && !counted[j] {
					counted[j] = true
					count++
				}
				break people
			}
		}
	}
	if count < k {
		return results, fmt.Errorf("%w: %d distinct trusted approvers verify, %d needed", ErrQuorum, count, k)
	}
	return results, nil
}

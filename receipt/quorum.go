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
// [MaxSize] bytes, exactly the fields of [QuorumFormatV1], and each
// receipt as [Parse] reads one.
func ParseQuorum(data []byte) (*Quorum, error) {
	if len(data) > MaxQuorumReceipts*MaxSize {
		return nil, fmt.Errorf("receipt: quorum over %d bytes: %w", MaxQuorumReceipts*MaxSize, canon.ErrTooLarge)
	}
	top, err := exactKeys(data, "quorum", []string{"format", "needed", "receipts"})
	if err != nil {
		return nil, err
	}
	var q Quorum
	if err := json.Unmarshal(top["format"], &q.Format); err != nil || q.Format != QuorumFormatV1 {
		return nil, fmt.Errorf("%w: format is not %s", ErrFormat, QuorumFormatV1)
	}
	if err := json.Unmarshal(top["needed"], &q.Needed); err != nil || q.Needed < 1 || q.Needed > MaxQuorumReceipts {
		return nil, fmt.Errorf("%w: needed is not 1 to %d", ErrFormat, MaxQuorumReceipts)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(top["receipts"], &raws); err != nil {
		return nil, fmt.Errorf("%w: receipts is not a list", ErrMalformed)
	}
	if len(raws) == 0 || len(raws) > MaxQuorumReceipts {
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

// VerifyQuorum checks that at least k distinct people among trusted
// approved exactly one effect: every receipt in q is about the same
// approval request (effect digest, nonce, card hash and expiry: one
// challenge), and at least k of them verify ([Verify], for p) each under
// a different trusted key, for a different approver. A receipt made with
// a key not in trusted, or a second receipt with a key already counted,
// counts for nothing. It returns the Result of each receipt (nil for one
// no trusted key claims) and, when fewer than k count, an error wrapping
// [ErrQuorum]. k must be at least 1.
func VerifyQuorum(q *Quorum, trusted []*TrustedKey, k int, p Policy) ([]*Result, error) {
	if q == nil || k < 1 || len(trusted) == 0 {
		return nil, fmt.Errorf("%w: nil quorum, no keys or k below 1", ErrPolicy)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if q.Format != QuorumFormatV1 || len(q.Receipts) == 0 || len(q.Receipts) > MaxQuorumReceipts {
		return nil, fmt.Errorf("%w: not a %s quorum of 1 to %d receipts", ErrFormat, QuorumFormatV1, MaxQuorumReceipts)
	}
	first := q.Receipts[0]
	results := make([]*Result, len(q.Receipts))
	usedKey := make([]bool, len(trusted))
	usedUser := map[string]bool{}
	count := 0
	for i, r := range q.Receipts {
		if r == nil {
			continue
		}
		if !r.Digest.Equal(first.Digest) || !bytes.Equal(r.Nonce, first.Nonce) ||
			!r.CardHash.Equal(first.CardHash) || r.ExpiresAt != first.ExpiresAt {
			return results, fmt.Errorf("%w: receipt %d is about another approval request", ErrQuorum, i)
		}
		for j, key := range trusted {
			if key == nil || !key.matches(r.Approver.PublicKey) {
				continue
			}
			res, err := Verify(r, key, p)
			results[i] = res
			if err == nil && !usedKey[j] && !usedUser[r.Approver.User] {
				usedKey[j], usedUser[r.Approver.User] = true, true
				count++
			}
			break
		}
	}
	if count < k {
		return results, fmt.Errorf("%w: %d distinct trusted approvers verify, %d needed", ErrQuorum, count, k)
	}
	return results, nil
}

package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
)

// CheckpointTag separates signed audit checkpoints from every other
// message asu signs.
const CheckpointTag = "asu/v1/checkpoint"

// ErrCheckpoint is wrapped by every refusal of a checkpoint: a signature
// that does not verify with the gate's key, a malformed checkpoint file, or
// a chain that does not start right after the checkpoint.
var ErrCheckpoint = errors.New("audit: checkpoint does not verify")

// Checkpoint is a point of the audit chain the gate vouches for: the
// record at Seq has hash Hash and time Time (Unix milliseconds). The gate
// signs checkpoints with its ed25519 key ([SignCheckpoint]) as the chain
// grows; an auditor who holds a signed checkpoint can verify an export
// that starts after it ([VerifyChainFrom]) and knows that no record up to
// Seq was removed or rewritten without the gate's key. Seq 0 with a zero
// Hash is the start of the chain.
type Checkpoint struct {
	Seq  uint64       `json:"seq"`
	Hash canon.Digest `json:"hash"`
	Time int64        `json:"time"`
}

// message is what the gate's key signs:
//
//	SHA-256("asu/v1/checkpoint" ‖ 0x00 ‖ uint64be(seq) ‖ hash[32] ‖ uint64be(time))
func (cp Checkpoint) message() []byte {
	var buf [len(CheckpointTag) + 1 + 8 + 32 + 8]byte
	n := copy(buf[:], CheckpointTag)
	buf[n] = 0
	n++
	binary.BigEndian.PutUint64(buf[n:], cp.Seq)
	n += 8
	n += copy(buf[n:], cp.Hash[:])
	binary.BigEndian.PutUint64(buf[n:], uint64(cp.Time))
	sum := sha256.Sum256(buf[:])
	return sum[:]
}

// SignCheckpoint signs cp with the gate's key.
func SignCheckpoint(priv ed25519.PrivateKey, cp Checkpoint) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: sign checkpoint: not an ed25519 private key", ErrCheckpoint)
	}
	return ed25519.Sign(priv, cp.message()), nil
}

// VerifyCheckpoint checks sig over cp with the gate's public key. It
// fails with [ErrCheckpoint].
func VerifyCheckpoint(pub ed25519.PublicKey, cp Checkpoint, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: not an ed25519 public key", ErrCheckpoint)
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, cp.message(), sig) {
		return fmt.Errorf("%w: signature does not verify with the gate's key", ErrCheckpoint)
	}
	return nil
}

// SignedCheckpoint is a checkpoint with the gate's signature, the file
// format `verify audit --checkpoint` reads: one JSON object,
//
//	{"seq":120,"hash":"<64 hex>","time":1764460800000,"sig":"<base64>"}
//
// A checkpoint signed with a key ring also names the key that signed it,
// "kid" (outside the signed message: it only picks the key):
//
//	{"seq":120,"hash":"<64 hex>","time":1764460800000,"sig":"<base64>","kid":"3f9a1c2b4d5e6f70"}
type SignedCheckpoint struct {
	Checkpoint
	Sig   []byte `json:"sig"`
	KeyID string `json:"kid,omitempty"`
}

// CheckpointKeys are the gate's checkpoint keys by id, as they stand at a
// time: a key ring's public half (keyring.PublicRing) is one. Verify
// checks the Ed25519 signature sig over msg under key id (or, for an
// empty id, under any key in force at at) and returns the id it verified
// under; it fails for an unknown key, a key retired past its grace, or a
// signature that does not verify.
type CheckpointKeys interface {
	Verify(id string, at time.Time, msg, sig []byte) (string, error)
}

// VerifySignedCheckpoint checks sc's signature under the key it names in
// keys, as that key stands at at (a checkpoint without a key id: under
// any key in force). It fails with [ErrCheckpoint], wrapping the key
// ring's reason (a key unknown, or retired past its grace, by id).
func VerifySignedCheckpoint(keys CheckpointKeys, sc SignedCheckpoint, at time.Time) error {
	if keys == nil {
		return fmt.Errorf("%w: no checkpoint keys", ErrCheckpoint)
	}
	if len(sc.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is not %d bytes", ErrCheckpoint, ed25519.SignatureSize)
	}
	if _, err := keys.Verify(sc.KeyID, at, sc.message(), sc.Sig); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

// VerifyChainFromKeys is [VerifyChainFrom] with the gate's key ring: sc's
// signature is checked with [VerifySignedCheckpoint] at time at, then
// records against sc as VerifyChainFrom does.
func VerifyChainFromKeys(records []Record, keys CheckpointKeys, sc SignedCheckpoint, at time.Time) error {
	if err := VerifySignedCheckpoint(keys, sc, at); err != nil {
		return err
	}
	return verifyFrom(records, sc.Checkpoint)
}

// MaxCheckpointSize bounds a checkpoint file.
const MaxCheckpointSize = 4 << 10

// ParseSignedCheckpoint reads a [SignedCheckpoint] file. It checks the form
// only (no duplicate or unknown fields, each named exactly: "Seq" or
// "ſeq" is not seq, as it would be to encoding/json alone; a 64-byte
// signature), as an export's lines are read; verify the signature with
// [VerifyCheckpoint] or [VerifyChainFrom]. Failures wrap [ErrCheckpoint].
func ParseSignedCheckpoint(b []byte) (SignedCheckpoint, error) {
	var sc SignedCheckpoint
	if err := readExact(b, MaxCheckpointSize, checkpointShape, &sc, "a signed checkpoint"); err != nil {
		return SignedCheckpoint{}, fmt.Errorf("%w: checkpoint file: %w", ErrCheckpoint, err)
	}
	if len(sc.Sig) != ed25519.SignatureSize {
		return SignedCheckpoint{}, fmt.Errorf("%w: checkpoint file: signature is not %d bytes", ErrCheckpoint, ed25519.SignatureSize)
	}
	return sc, nil
}

// CheckpointOf returns the checkpoint of a verified record, for the gate
// to sign.
func CheckpointOf(r Record) Checkpoint {
	return Checkpoint{Seq: uint64(r.Seq), Hash: r.Hash, Time: r.Time}
}

// VerifyChainFrom verifies records against a checkpoint the gate signed.
// It checks sig over cp with the gate's key, then either
//
//   - records continue the chain right after cp (the first is Seq
//     cp.Seq+1 and its PrevHash is cp.Hash): an export that does not start
//     at the first record verifies only this way, or with an anchor hash
//     the caller keeps itself ([VerifyChain]); or
//   - records start at the first record and pass through cp (the record
//     at cp.Seq has hash cp.Hash), which exposes a chain rewritten from
//     the start, since the rewriter cannot sign.
//
// and then the links and hashes as [VerifyChain] does. It fails with an
// error wrapping [ErrCheckpoint], or a [*ChainBreak]. No records do
// neither: they fail as records cut before the checkpoint do.
func VerifyChainFrom(records []Record, pub ed25519.PublicKey, cp Checkpoint, sig []byte) error {
	if err := VerifyCheckpoint(pub, cp, sig); err != nil {
		return err
	}
	return verifyFrom(records, cp)
}

// verifyFrom is VerifyChainFrom once the checkpoint's signature verified.
func verifyFrom(records []Record, cp Checkpoint) error {
	if cp.Seq == 0 && !cp.Hash.IsZero() {
		return fmt.Errorf("%w: a checkpoint at seq 0 has a zero hash", ErrCheckpoint)
	}
	if len(records) == 0 {
		return errNoRecords(cp.Seq)
	}
	first := records[0]
	switch {
	case first.Seq >= 1 && uint64(first.Seq) == cp.Seq+1:
		if !first.PrevHash.Equal(cp.Hash) {
			return &ChainBreak{Index: 0, Seq: first.Seq, Why: "prev_hash is not the checkpoint's hash"}
		}
		return verifyChain(records, cp.Hash)
	case first.Seq == 1:
		if err := verifyChain(records, canon.Digest{}); err != nil {
			return err
		}
		at := cp.Seq - 1 // index of the record at cp.Seq
		if at >= uint64(len(records)) {
			return fmt.Errorf("%w: the chain ends at seq %d (record %d), before the checkpoint at seq %d", ErrCheckpoint, records[len(records)-1].Seq, len(records), cp.Seq)
		}
		if !records[at].Hash.Equal(cp.Hash) {
			return &ChainBreak{Index: int(at), Seq: records[at].Seq, Why: "record hash is not the signed checkpoint's"}
		}
		return nil
	}
	return fmt.Errorf("%w: the first record is seq %d, neither the first of the chain nor the one after the checkpoint at seq %d", ErrCheckpoint, first.Seq, cp.Seq)
}

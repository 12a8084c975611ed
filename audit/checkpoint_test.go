package audit_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

func TestCheckpointSignature(t *testing.T) {
	key := audittest.GateKey(1)
	pub := key.Public().(ed25519.PublicKey)
	c := audittest.Chain(5, chainStart)
	cp := audit.CheckpointOf(c[4])
	sig, err := audit.SignCheckpoint(key, cp)
	require.NoError(t, err)
	require.NoError(t, audit.VerifyCheckpoint(pub, cp, sig))

	for name, bad := range map[string]audit.Checkpoint{
		"seq":  {Seq: cp.Seq + 1, Hash: cp.Hash, Time: cp.Time},
		"hash": {Seq: cp.Seq, Hash: c[3].Hash, Time: cp.Time},
		"time": {Seq: cp.Seq, Hash: cp.Hash, Time: cp.Time - 1},
	} {
		assert.ErrorIs(t, audit.VerifyCheckpoint(pub, bad, sig), audit.ErrCheckpoint, name)
	}
	other := audittest.GateKey(2).Public().(ed25519.PublicKey)
	assert.ErrorIs(t, audit.VerifyCheckpoint(other, cp, sig), audit.ErrCheckpoint, "another gate's key")
	assert.ErrorIs(t, audit.VerifyCheckpoint(pub, cp, sig[:63]), audit.ErrCheckpoint, "short signature")
	assert.ErrorIs(t, audit.VerifyCheckpoint(pub[:31], cp, sig), audit.ErrCheckpoint, "short key")
	_, err = audit.SignCheckpoint(key[:10], cp)
	assert.ErrorIs(t, err, audit.ErrCheckpoint)

	// A checkpoint signature is not a signature of anything else the gate's
	// key could sign over the same bytes: the tag is in the message.
	raw := append(append([]byte{}, cp.Hash[:]...), byte(cp.Seq))
	assert.ErrorIs(t, audit.VerifyCheckpoint(pub, cp, ed25519.Sign(key, raw)), audit.ErrCheckpoint)
}

// naiveVerifyChain is the rule VerifyChain had before checkpoints: a chain
// not starting at Seq 1 is checked from its first record, whose PrevHash is
// taken as given.
func naiveVerifyChain(records []audit.Record) error {
	if len(records) > 0 && records[0].Seq != 1 {
		return audit.VerifyChain(records, records[0].PrevHash)
	}
	return audit.VerifyChain(records, canon.Digest{})
}

// TestVerifyChainFromEveryCut tries every way to cut a chain's head off
// against every checkpoint: a window verifies exactly when it starts right
// after the signed checkpoint, a whole chain exactly when it passes through
// it; without a checkpoint no window verifies. The naive rule accepts every
// window, so deleting the first records of a log went unnoticed.
func TestVerifyChainFromEveryCut(t *testing.T) {
	key := audittest.GateKey(1)
	pub := key.Public().(ed25519.PublicKey)
	const n = 16
	c := audittest.Chain(n, chainStart)
	naiveAccepts := 0
	for start := range n {
		window := c[start:]
		if naiveVerifyChain(window) == nil && start > 0 {
			naiveAccepts++
		}
		if start > 0 {
			assert.Error(t, audit.VerifyChain(window, canon.Digest{}), "start %d without an anchor", start)
		}
		for at := range n + 1 { // at 0: the start of the chain
			var sc audit.SignedCheckpoint
			if at == 0 {
				sig, err := audit.SignCheckpoint(key, audit.Checkpoint{})
				require.NoError(t, err)
				sc = audit.SignedCheckpoint{Sig: sig}
			} else {
				sc = audittest.SignedCheckpoint(key, c[at-1])
			}
			err := audit.VerifyChainFrom(window, pub, sc.Checkpoint, sc.Sig)
			if start == at || start == 0 && at <= n {
				assert.NoError(t, err, "window from %d, checkpoint at seq %d", start, at)
			} else {
				assert.Error(t, err, "window from %d, checkpoint at seq %d", start, at)
			}
		}
	}
	assert.Equal(t, n-1, naiveAccepts, "the naive rule accepts every truncated chain")
}

// TestEveryWindowAgainstEveryCheckpoint: every window of a chain, empty
// ones and ones whose tail is cut included, against every checkpoint, in
// memory and streamed: a window verifies exactly when it holds records and
// either starts right after the checkpoint or starts at the first record
// and reaches it. An emptied export fails as a cut one does, with
// ErrCheckpoint, though it breaks no link.
func TestEveryWindowAgainstEveryCheckpoint(t *testing.T) {
	key := audittest.GateKey(1)
	pub := key.Public().(ed25519.PublicKey)
	const n = 8
	c := audittest.Chain(n, chainStart)
	for at := range n + 1 { // at 0: the start of the chain
		sc := audit.SignedCheckpoint{Checkpoint: audit.Checkpoint{}}
		if at > 0 {
			sc = audittest.SignedCheckpoint(key, c[at-1])
		} else {
			sig, err := audit.SignCheckpoint(key, sc.Checkpoint)
			require.NoError(t, err)
			sc.Sig = sig
		}
		for start := range n + 1 {
			for end := start; end <= n; end++ {
				window := c[start:end]
				valid := end > start && (start == at || start == 0 && end >= at)
				name := fmt.Sprintf("records %d-%d, checkpoint at seq %d", start+1, end, at)
				errMem := audit.VerifyChainFrom(window, pub, sc.Checkpoint, sc.Sig)
				_, errStream := audit.NewVerifier(bytes.NewReader(export(t, window)), audit.VerifyOptions{Checkpoint: &sc, GateKey: pub}).Verify()
				if valid {
					assert.NoError(t, errMem, name)
					assert.NoError(t, errStream, name)
					continue
				}
				assert.Error(t, errMem, name)
				assert.Error(t, errStream, name)
				if start == end || start == 0 && end < at {
					assert.ErrorIs(t, errMem, audit.ErrCheckpoint, name)
					assert.ErrorIs(t, errStream, audit.ErrCheckpoint, name)
				}
			}
		}
	}
}

// TestVerifyChainFromRewrittenChain: an attacker who deletes the first
// records and renumbers and rehashes the rest produces a chain that
// verifies from the start, but not through the gate's signed checkpoint.
func TestVerifyChainFromRewrittenChain(t *testing.T) {
	key := audittest.GateKey(1)
	pub := key.Public().(ed25519.PublicKey)
	c := audittest.Chain(20, chainStart)
	sc := audittest.SignedCheckpoint(key, c[14])

	forged := append([]audit.Record(nil), c[5:]...)
	for i := range forged {
		forged[i].Seq = int64(i + 1)
	}
	forged[0].PrevHash = canon.Digest{}
	relink(t, forged, 0)
	require.NoError(t, audit.VerifyChain(forged, canon.Digest{}), "the forgery is a well-formed chain")
	assert.Error(t, audit.VerifyChainFrom(forged, pub, sc.Checkpoint, sc.Sig))
	assert.NoError(t, audit.VerifyChainFrom(c, pub, sc.Checkpoint, sc.Sig))

	// A checkpoint the attacker signed with their own key does not help.
	mine := audittest.SignedCheckpoint(audittest.GateKey(9), forged[3])
	assert.ErrorIs(t, audit.VerifyChainFrom(forged[4:], pub, mine.Checkpoint, mine.Sig), audit.ErrCheckpoint)
}

func TestSignedCheckpointFile(t *testing.T) {
	key := audittest.GateKey(1)
	c := audittest.Chain(3, chainStart)
	sc := audittest.SignedCheckpoint(key, c[2])
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	got, err := audit.ParseSignedCheckpoint(b)
	require.NoError(t, err)
	assert.Equal(t, sc, got)

	for name, in := range map[string]string{
		"unknown field": `{"seq":1,"hash":"` + c[0].Hash.String() + `","time":1,"sig":"` + b64(sc.Sig) + `","x":1}`,
		"duplicate":     `{"seq":1,"seq":2,"hash":"` + c[0].Hash.String() + `","time":1,"sig":"` + b64(sc.Sig) + `"}`,
		"short sig":     `{"seq":1,"hash":"` + c[0].Hash.String() + `","time":1,"sig":"AAAA"}`,
		"bad hash":      `{"seq":1,"hash":"xyz","time":1,"sig":"` + b64(sc.Sig) + `"}`,
		"negative seq":  `{"seq":-1,"hash":"` + c[0].Hash.String() + `","time":1,"sig":"` + b64(sc.Sig) + `"}`,
		"not json":      `seq=1`,
		"too large":     `{"seq":1,"pad":"` + string(make([]byte, audit.MaxCheckpointSize)) + `"}`,
	} {
		_, err := audit.ParseSignedCheckpoint([]byte(in))
		assert.ErrorIs(t, err, audit.ErrCheckpoint, name)
	}
}

func b64(b []byte) string {
	out, _ := json.Marshal(b)
	return string(out[1 : len(out)-1])
}

func ExampleVerifyChainFrom() {
	gate := audittest.GateKey(1)
	chain := audittest.Chain(30, chainStart)
	// The gate signed a checkpoint at seq 10; later, records 1-10 were
	// archived and only 11-30 are exported.
	sc := audittest.SignedCheckpoint(gate, chain[9])
	export := chain[10:]

	fmt.Println(audit.VerifyChain(export, canon.Digest{}) != nil)
	fmt.Println(audit.VerifyChainFrom(export, gate.Public().(ed25519.PublicKey), sc.Checkpoint, sc.Sig))
	fmt.Println(audit.VerifyChainFrom(export[1:], gate.Public().(ed25519.PublicKey), sc.Checkpoint, sc.Sig) != nil)
	// Output:
	// true
	// <nil>
	// true
}

func ExampleSignCheckpoint() {
	gate := audittest.GateKey(1) // the gate's ed25519 key
	chain := audittest.Chain(3, chainStart)
	cp := audit.CheckpointOf(chain[2])
	sig, err := audit.SignCheckpoint(gate, cp)
	if err != nil {
		panic(err)
	}
	pub := gate.Public().(ed25519.PublicKey)
	fmt.Println(cp.Seq, audit.VerifyCheckpoint(pub, cp, sig))
	cp.Seq++
	fmt.Println(audit.VerifyCheckpoint(pub, cp, sig))
	// Output:
	// 3 <nil>
	// audit: checkpoint does not verify: signature does not verify with the gate's key
}

package audit_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

// export writes records as a chain export.
func export(t *testing.T, records []audit.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, audit.WriteChain(&buf, records))
	return buf.Bytes()
}

// tamper changes a generated chain the ways a log is attacked or damaged:
// rows deleted, swapped, duplicated, edited (with and without their hash
// recomputed), renumbered, the head cut, text that needs escapes (hashed
// right), arguments; or nothing.
func tamper(t *testing.T, rng *rand.Rand, c []audit.Record) ([]audit.Record, string) {
	if len(c) == 0 {
		return c, "empty"
	}
	i := rng.IntN(len(c))
	switch rng.IntN(10) {
	case 0:
		return c, "intact"
	case 1:
		return slices.Delete(c, i, i+1), "deleted row"
	case 2:
		j := rng.IntN(len(c))
		c[i], c[j] = c[j], c[i]
		return c, "swapped rows"
	case 3:
		return slices.Insert(c, i, c[i]), "duplicated row"
	case 4:
		c[i].Reason = "rewritten"
		return c, "edited row"
	case 5:
		c[i].Approver = "user:mallory"
		relink(t, c, i)
		return c, "edited row, tail rehashed"
	case 6:
		c[i].Reason, c[i].Principal.Delegations = "quote \" backslash \\ tab \t <&> \u2028 é 😀", []string{"a\nb"}
		relink(t, c, i)
		return c, "escapes, rehashed"
	case 7:
		c[i].Args = []byte(`{"to":"finance@example.com","amount":19.99}`)
		relink(t, c, i)
		return c, "arguments, rehashed"
	case 8:
		for k := i; k < len(c); k++ {
			c[k].Seq++
		}
		return c, "renumbered"
	}
	return c[i:], "head cut"
}

// mangle damages the export's lines: an empty line, a line that is not
// JSON, a field no record has, or nothing.
func mangle(rng *rand.Rand, b []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) < 2 || rng.IntN(3) > 0 {
		return b, false
	}
	i := rng.IntN(len(lines) - 1)
	bad := [][]byte{[]byte("\n"), []byte("{\"seq\":\n"), []byte("{\"mallory\":1}\n"), []byte("[]\n")}[rng.IntN(4)]
	lines = slices.Insert(lines, i, bad)
	return bytes.Join(lines, nil), true
}

// TestVerifierAgreesWithReadChainAndVerifyChain: on generated chains,
// tampered and damaged every way above, read from the start, from an
// anchor, or from a signed checkpoint, the streaming verifier accepts
// exactly what ReadChain then VerifyChain (or VerifyChainFrom) accepts,
// finds the same first break where both break, and reports what it read.
func TestVerifierAgreesWithReadChainAndVerifyChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	key := audittest.GateKey(3)
	pub := key.Public().(ed25519.PublicKey)
	kinds := map[string][2]int{} // kind -> valid, invalid
	for n := range 400 {
		full := audittest.Chain(rng.IntN(40), chainStart)
		c, kind := tamper(t, rng, slices.Clone(full))
		data, mangled := mangle(rng, export(t, c))
		var opts audit.VerifyOptions
		var want error
		records, readErr := audit.ReadChain(bytes.NewReader(data))
		mode := []string{"start", "anchor", "checkpoint"}[rng.IntN(3)]
		switch {
		case mode == "anchor" && len(c) > 0 && c[0].Seq > 1 && int(c[0].Seq-2) < len(full):
			opts.Anchor = full[c[0].Seq-2].Hash
		case mode == "checkpoint" && len(full) > 0:
			sc := audittest.SignedCheckpoint(key, full[rng.IntN(len(full))])
			opts.Checkpoint, opts.GateKey = &sc, pub
		}
		switch {
		case readErr != nil:
			want = readErr
		case opts.Checkpoint != nil:
			want = audit.VerifyChainFrom(records, pub, opts.Checkpoint.Checkpoint, opts.Checkpoint.Sig)
		default:
			want = audit.VerifyChain(records, opts.Anchor)
		}
		sum, got := audit.NewVerifier(bytes.NewReader(data), opts).Verify()
		name := fmt.Sprintf("case %d: %s, %s, %d records, mangled %t", n, kind, mode, len(c), mangled)
		require.Equal(t, want == nil, got == nil, "%s: want %v, got %v", name, want, got)
		k := kinds[kind]
		if want == nil {
			k[0]++
			require.Equal(t, len(records), sum.Records, name)
			if len(records) > 0 {
				last := records[len(records)-1]
				assert.Equal(t, audit.Summary{Records: len(records), FirstSeq: records[0].Seq, LastSeq: last.Seq,
					FirstPrev: records[0].PrevHash, Head: last.Hash}, sum, name)
			}
		} else {
			k[1]++
			var wb, gb *audit.ChainBreak
			switch {
			case opts.Checkpoint == nil && !mangled && errors.As(want, &wb):
				assert.Equal(t, want, got, "%s: the same first break", name)
			default:
				assert.True(t, errors.As(got, &gb) || errors.Is(got, audit.ErrCheckpoint) || errors.Is(got, audit.ErrMalformed), "%s: %v", name, got)
			}
		}
		kinds[kind] = k
	}
	for kind, k := range kinds {
		t.Logf("%-26s valid %3d  invalid %3d", kind, k[0], k[1])
	}
	assert.Positive(t, kinds["intact"][0])
	assert.Positive(t, kinds["edited row"][1])
}

// TestVerifierYieldsWhatReadChainReads: the records a verifier yields,
// copied out, are the records ReadChain returns.
func TestVerifierYieldsWhatReadChainReads(t *testing.T) {
	c := audittest.Chain(50, chainStart)
	c[7].Reason, c[9].Args = "needs \"escapes\"", []byte(`{"a":1}`)
	relink(t, c, 7)
	data := export(t, c)
	want, err := audit.ReadChain(bytes.NewReader(data))
	require.NoError(t, err)
	v := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{})
	var got []audit.Record
	for r := range v.All() {
		got = append(got, *r)
	}
	require.NoError(t, v.Err())
	assert.Equal(t, want, got)
	assert.True(t, v.Summary().Genesis())

	// A verifier reads its chain once.
	for range v.All() {
		t.Fatal("a second pass yields nothing")
	}
	assert.Error(t, v.Err())
}

// TestVerifierStopsWhereTheConsumerStops: breaking out of All leaves the
// rest unread and no error.
func TestVerifierStopsWhereTheConsumerStops(t *testing.T) {
	v := audit.NewVerifier(bytes.NewReader(export(t, audittest.Chain(20, chainStart))), audit.VerifyOptions{})
	n := 0
	for range v.All() {
		if n++; n == 5 {
			break
		}
	}
	assert.NoError(t, v.Err())
	assert.Equal(t, 5, v.Summary().Records)
}

// TestVerifierCheckpointKeys: a checkpoint is checked by the key ring as
// VerifyChainFromKeys checks it, and before any record is read; a
// checkpoint with no key to check it by, or with an anchor, is refused.
func TestVerifierCheckpointKeys(t *testing.T) {
	key := audittest.GateKey(1)
	c := audittest.Chain(10, chainStart)
	sc := audittest.SignedCheckpoint(key, c[3])
	sc.KeyID = "k1"
	ring := ringKeys{keys: map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}}
	data := export(t, c[4:])
	_, err := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{Checkpoint: &sc, Keys: ring, At: chainStart}).Verify()
	require.NoError(t, err)
	require.NoError(t, audit.VerifyChainFromKeys(c[4:], ring, sc, chainStart))

	other := audittest.GateKey(2).Public().(ed25519.PublicKey)
	for name, opts := range map[string]audit.VerifyOptions{
		"another gate's key": {Checkpoint: &sc, GateKey: other},
		"no key":             {Checkpoint: &sc},
		"anchor too":         {Checkpoint: &sc, GateKey: key.Public().(ed25519.PublicKey), Anchor: c[2].Hash},
	} {
		reads := &countingReader{r: bytes.NewReader(data)}
		_, err := audit.NewVerifier(reads, opts).Verify()
		assert.ErrorIs(t, err, audit.ErrCheckpoint, name)
		assert.Zero(t, reads.n, "%s: nothing is read before the checkpoint is checked", name)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// generated is an export produced as it is read: a valid chain of n
// records, one line at a time, so a test holds no chain in memory.
type generated struct {
	n, i int
	prev canon.Digest
	buf  bytes.Buffer
}

func newGenerated(n int) *generated { return &generated{n: n} }

func (g *generated) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i < g.n {
		r := audittest.Chain(1, chainStart)[0]
		r.Seq, r.Step, r.TicketID = int64(g.i+1), fmt.Sprint(g.i), fmt.Sprintf("tk-%d", g.i/3)
		r.Time = chainStart.Add(time.Duration(g.i) * time.Second).UnixMilli()
		r.PrevHash = g.prev
		h, err := r.ComputeHash()
		if err != nil {
			return 0, err
		}
		r.Hash, g.prev = h, h
		if err := audit.WriteChain(&g.buf, []audit.Record{r}); err != nil {
			return 0, err
		}
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// peakHeap runs read over an export of n records and returns the most
// heap in use, sampled after a collection every 500 records.
func peakHeap(t *testing.T, n int, read func(io.Reader, func()) error) uint64 {
	t.Helper()
	var peak uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	sample()
	base := peak
	peak = 0
	require.NoError(t, read(newGenerated(n), sample))
	sample()
	if peak < base {
		return 0
	}
	return peak - base
}

// TestVerifierMemoryIsFlat: streaming a chain ten times as long holds no
// more memory (bytes of heap in use, sampled during the run, never time);
// reading it whole, as ReadChain does, grows with the chain, which is
// what the test would see if the verifier kept the records.
func TestVerifierMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("verifies 22,000 records")
	}
	stream := func(r io.Reader, sample func()) error {
		v := audit.NewVerifier(r, audit.VerifyOptions{})
		n := 0
		for range v.All() {
			if n++; n%500 == 0 {
				sample()
			}
		}
		return v.Err()
	}
	whole := func(r io.Reader, sample func()) error {
		records, err := audit.ReadChain(r)
		if err != nil {
			return err
		}
		sample()
		return audit.VerifyChain(records, canon.Digest{})
	}
	short, long := peakHeap(t, 2_000, stream), peakHeap(t, 20_000, stream)
	t.Logf("streaming: peak heap %d B at 2,000 records, %d B at 20,000", short, long)
	assert.Less(t, long, short+128<<10, "streaming memory does not grow with the chain (ten times the records, a sampling margin)")

	wShort, wLong := peakHeap(t, 2_000, whole), peakHeap(t, 20_000, whole)
	t.Logf("reading whole: peak heap %d B at 2,000 records, %d B at 20,000", wShort, wLong)
	assert.Greater(t, wLong, wShort+4<<20, "the naive reader does grow (the test can tell)")
}

// ExampleNewVerifier verifies an export as it reads it, in constant
// memory, and counts what it read.
func ExampleNewVerifier() {
	var export bytes.Buffer
	_ = audit.WriteChain(&export, audittest.Chain(1000, chainStart))
	v := audit.NewVerifier(&export, audit.VerifyOptions{})
	approved := 0
	for r := range v.All() {
		if r.Decision == audit.DecisionApproved {
			approved++
		}
	}
	s := v.Summary()
	fmt.Println(v.Err(), s.Records, s.Genesis(), s.LastSeq, approved)
	// Output: <nil> 1000 true 1000 167
}

// TestErrorsNumberTheLine: whatever is wrong on a line of an export (a
// line repeated, removed, edited, not a record, empty, or a checkpoint's
// record missing), the failure numbers that line from 1, in ReadChain's
// and VerifyChain's errors as in the Verifier's, and Verifier.Line is
// that line.
func TestErrorsNumberTheLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	for range 200 {
		c := audittest.Chain(3+rng.IntN(12), chainStart)
		lines := bytes.SplitAfter(export(t, c), []byte("\n"))
		lines = lines[:len(lines)-1] // after the last newline
		k := 1 + rng.IntN(len(c)-2)  // the 0-based line to spoil: neither the first nor the last
		var kind string
		switch rng.IntN(5) {
		case 0:
			kind, lines = "repeated", slices.Insert(lines, k, lines[k-1])
		case 1:
			kind, lines = "removed", slices.Delete(lines, k, k+1)
		case 2:
			kind = "edited"
			lines[k] = bytes.Replace(lines[k], []byte(`"reason":"`), []byte(`"reason":"edited `), 1)
		case 3:
			kind, lines = "not a record", slices.Insert(lines, k, []byte("{\"seq\":\n"))
		case 4:
			kind, lines = "empty", slices.Insert(lines, k, []byte("\n"))
		}
		data := bytes.Join(lines, nil)
		want := k + 1
		name := fmt.Sprintf("%s line %d of %d", kind, want, len(lines))

		v := audit.NewVerifier(bytes.NewReader(data), audit.VerifyOptions{})
		_, err := v.Verify()
		require.Error(t, err, name)
		assert.Equal(t, want, v.Line(), name)
		records, readErr := audit.ReadChain(bytes.NewReader(data))
		if readErr == nil {
			readErr = audit.VerifyChain(records, canon.Digest{})
		}
		for _, err := range []error{err, readErr} {
			var b *audit.ChainBreak
			if errors.As(err, &b) {
				assert.Equal(t, want, b.Index+1, name)
				assert.Contains(t, err.Error(), fmt.Sprintf("at record %d (seq %d)", want, b.Seq), name)
			} else {
				assert.ErrorIs(t, err, audit.ErrMalformed, name)
				assert.Contains(t, err.Error(), fmt.Sprintf(": line %d", want), name)
			}
		}
	}

	// A chain that ends before its checkpoint fails after its last line.
	key := audittest.GateKey(1)
	c := audittest.Chain(8, chainStart)
	sc := audittest.SignedCheckpoint(key, c[7])
	v := audit.NewVerifier(bytes.NewReader(export(t, c[:3])), audit.VerifyOptions{Checkpoint: &sc, GateKey: key.Public().(ed25519.PublicKey)})
	_, err := v.Verify()
	require.ErrorIs(t, err, audit.ErrCheckpoint)
	assert.Equal(t, 3, v.Line())
	assert.Contains(t, err.Error(), "ends at seq 3 (line 3)")
	v = audit.NewVerifier(bytes.NewReader(nil), audit.VerifyOptions{Checkpoint: &sc, GateKey: key.Public().(ed25519.PublicKey)})
	_, err = v.Verify()
	require.ErrorIs(t, err, audit.ErrCheckpoint)
	assert.Zero(t, v.Line(), "no line to name")
}

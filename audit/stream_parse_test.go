package audit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowRead is how ReadChain reads a line the fast parser declines:
// canon accepts it, every member is named exactly as its field, then
// encoding/json decodes it.
func slowRead(b []byte) (Record, bool) {
	var r Record
	if err := readRecord(b, &r); err != nil {
		return Record{}, false
	}
	return r, true
}

// checkFastAgrees fails when the fast parser accepts a line the slow way
// refuses, or reads it differently.
func checkFastAgrees(t *testing.T, line []byte) bool {
	t.Helper()
	l := newLines(bytes.NewReader(nil))
	if !l.parseFast(line) {
		return false
	}
	want, ok := slowRead(line)
	require.True(t, ok, "the fast parser accepted a line the slow way refuses: %q", line)
	require.Equal(t, want, l.rec, "the fast parser read %q differently", line)
	return true
}

// plainRecord is a record as a gate writes most of them: text without
// anything JSON escapes, integers of a few digits, no arguments.
func plainRecord(rng *rand.Rand) Record {
	r := randomRecord(rng)
	plain := func(s string) string {
		return strings.Map(func(c rune) rune {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029 {
				return 'x'
			}
			return c
		}, s)
	}
	for _, s := range []*string{&r.TicketID, &r.Task, &r.Step, &r.Session, &r.Tool, &r.EffectClass, &r.PolicyVersion,
		&r.Decision, &r.Reason, &r.Approver, &r.Nonce, &r.CardHash, &r.Result, &r.IdempotencyKey,
		&r.Principal.User, &r.Principal.Agent} {
		*s = plain(*s)
	}
	for i := range r.Taint {
		r.Taint[i] = plain(r.Taint[i])
	}
	for i := range r.Principal.Delegations {
		r.Principal.Delegations[i] = plain(r.Principal.Delegations[i])
	}
	r.Seq, r.Time, r.DecisionMillis = rng.Int64N(1e12)-5e11, rng.Int64N(2e12), rng.Int64N(1e6)
	r.Args = nil
	return r
}

// exportLine is r as WriteChain writes it.
func exportLine(t *testing.T, r Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(r))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// respell changes one thing about a line that JSON or encoding/json lets
// vary: whitespace, a key's case, a duplicated key, an escape, a number's
// form, null, a digest's case, a key it does not know, trailing data.
func respell(rng *rand.Rand, line []byte) []byte {
	s := string(line)
	edits := []func() string{
		func() string { return strings.Replace(s, ",", " ,", 1) },
		func() string { return strings.Replace(s, `":`, `": `, 1+rng.IntN(3)) },
		func() string { return strings.Replace(s, `"seq"`, `"Seq"`, 1) },
		func() string { return strings.Replace(s, `"tool"`, `"TOOL"`, 1) },
		func() string { return strings.Replace(s, `{"seq":`, `{"seq":7,"seq":`, 1) },
		func() string { return strings.Replace(s, `"task":"`, `"task":"\u0041`, 1) },
		func() string { return strings.Replace(s, `"time":`, `"time":-0`, 1) },
		func() string { return strings.Replace(s, `"time":`, `"time":0`, 1) },
		func() string { return strings.Replace(s, `,"time":`, `,"time":1e3,"x":`, 1) },
		func() string { return strings.Replace(s, `"decision_millis":`, `"decision_millis":1.0,"y":`, 1) },
		func() string { return strings.Replace(s, `"reason":"`, `"reason":null,"z":"`, 1) },
		func() string { return strings.Replace(s, `"taint":`, `"taint":null,"w":`, 1) },
		func() string { return strings.ToUpper(s[:len(s)/2]) + s[len(s)/2:] },
		func() string { return strings.Replace(s, `"prev_hash":"`, `"prev_hash":"A`, 1) },
		func() string { return strings.Replace(s, `"hash":"`, `"hash":"0`, 1) },
		func() string { return strings.Replace(s, `}`, `,"args":{"a":1}}`, 1) },
		func() string { return s + " " },
		func() string { return s + "{}" },
		func() string { return s[:rng.IntN(len(s))] },
		func() string { return strings.Replace(s, `"delegations":`, `"delegations":["a",`, 1) },
		func() string { return strings.Replace(s, `"principal":{`, `"principal":{"user":"u",`, 1) },
		func() string {
			b := []byte(s)
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
			return string(b)
		},
	}
	return []byte(edits[rng.IntN(len(edits))]())
}

// TestFastParseReadsAsReadChainRead: on generated records as exported,
// and on every kind of respelling of them, the fast parser either
// declines or reads exactly what canon and encoding/json read; and it
// does take the lines a gate writes.
func TestFastParseReadsAsReadChainRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	fastPlain, fastRespelled, respelled := 0, 0, 0
	for range 3000 {
		r := plainRecord(rng)
		line := exportLine(t, r)
		if checkFastAgrees(t, line) {
			fastPlain++
		}
		for range 3 {
			if checkFastAgrees(t, respell(rng, line)) {
				fastRespelled++
			}
			respelled++
		}
		checkFastAgrees(t, exportLine(t, randomRecord(rng)))
	}
	assert.Equal(t, 3000, fastPlain, "every plain exported line takes the fast path")
	assert.Less(t, fastRespelled, respelled/2, "most respellings fall back to the slow path")
}

// FuzzFastParse: on any line, the fast parser declines or agrees with
// canon and encoding/json.
func FuzzFastParse(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(plainRecord(rng))
		f.Add(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"seq":1,"principal":{},"taint":[]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastAgrees(t, line)
	})
}

// TestQuotedKeysAreRecordKeys: the keys the fast parser expects in order
// are the record's own, each at its recordKey index, in the order
// encoding/json writes a Record.
func TestQuotedKeysAreRecordKeys(t *testing.T) {
	var order []string
	line := exportLine(t, Record{Taint: []string{}})
	dec := json.NewDecoder(bytes.NewReader(line))
	_, err := dec.Token()
	require.NoError(t, err)
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		order = append(order, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	require.Len(t, quotedKeys, len(order))
	for i, k := range order {
		assert.Equal(t, `"`+k+`":`, string(quotedKeys[i]))
		assert.Equal(t, i, recordKey([]byte(k)))
	}
}

package audit

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// pieces are what strings of audit records are made of here: every byte
// RFC 8785 escapes, what encoding/json escapes and canon writes back
// (<, >, &, U+2028, U+2029), DEL, several scripts and a character outside
// the BMP.
var pieces = []string{"a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f",
	"\x7f", "<", ">", "&", "\u2028", "\u2029", "é", "а", "中", "ﬁ", "\u200b", "\ufeff", "😀", "user:dana"}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomList(rng *rand.Rand) []string {
	switch rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+rng.IntN(4))
	for i := range out {
		out[i] = randomText(rng)
	}
	return out
}

func randomInt(rng *rand.Rand) int64 {
	edges := []int64{0, 1, -1, maxSafeInteger, -maxSafeInteger, maxSafeInteger + 1, -maxSafeInteger - 1,
		1 << 62, -1 << 63, 1<<63 - 1, 1_764_000_000_000}
	if rng.IntN(2) == 0 {
		return edges[rng.IntN(len(edges))]
	}
	return rng.Int64N(1<<40) - 1<<39
}

func randomDigest(rng *rand.Rand) canon.Digest {
	var d canon.Digest
	if rng.IntN(4) > 0 {
		for i := range d {
			d[i] = byte(rng.IntN(256))
		}
	}
	return d
}

func randomRecord(rng *rand.Rand) Record {
	r := Record{
		Seq: randomInt(rng), Time: randomInt(rng), DecisionMillis: randomInt(rng),
		TicketID: randomText(rng), Task: randomText(rng), Step: randomText(rng), Session: randomText(rng),
		Tool: randomText(rng), EffectClass: randomText(rng), ArgsDigest: randomDigest(rng),
		Principal:     canon.Principal{User: randomText(rng), Agent: randomText(rng), Delegations: randomList(rng)},
		PolicyVersion: randomText(rng), Decision: randomText(rng), Reason: randomText(rng), Taint: randomList(rng),
		Approver: randomText(rng), Nonce: randomText(rng), CardHash: randomText(rng), Result: randomText(rng),
		IdempotencyKey: randomText(rng), PrevHash: randomDigest(rng),
	}
	if rng.IntN(8) == 0 {
		r.Args = json.RawMessage(`{"b":1,"a":"<x>"}`)
	}
	return r
}

// TestAuditCanonicalIsTheMarshalledForm checks the hand-written canonical
// form of audit records against its definition (encoding/json, then
// canon) on generated records: every escape, scripts, empty and missing
// lists, integers at and past the ES6 exact range. A record the fast form
// declines must hash the same through the definition.
func TestAuditCanonicalIsTheMarshalledForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fast := 0
	for range 20000 {
		r := randomRecord(rng)
		want, err := r.marshalCanonical()
		got, ok := r.appendCanonical(nil)
		if err != nil {
			require.False(t, ok, "the fast form takes a record the definition refuses: %v", err)
			continue
		}
		if !ok {
			continue
		}
		fast++
		require.Equal(t, string(want), string(got), "record %+v", r)
	}
	assert.Greater(t, fast, 5000, "many records take the fast form")
}

// TestAuditCanonicalDeclines names what the fast form leaves to the
// definition.
func TestAuditCanonicalDeclines(t *testing.T) {
	for name, r := range map[string]Record{
		"arguments":                   {Args: json.RawMessage(`{"a":1}`)},
		"seq past 2^53":               {Seq: maxSafeInteger + 1},
		"time below -2^53":            {Time: -maxSafeInteger - 1},
		"a record near canon's limit": {Reason: strings.Repeat("<", canon.DefaultMaxBytes/6)},
	} {
		_, ok := r.appendCanonical(nil)
		assert.False(t, ok, name)
	}
}

// FuzzAuditCanonical compares the fast form with the definition on any
// text and integers.
func FuzzAuditCanonical(f *testing.F) {
	f.Add("user:dana", "a\u2028<b>\"\\\x00", "taint", int64(1), int64(1<<53))
	f.Fuzz(func(t *testing.T, user, reason, taint string, seq, millis int64) {
		r := Record{Seq: seq, DecisionMillis: millis, Reason: reason, Taint: []string{taint},
			Principal: canon.Principal{User: user, Agent: reason}}
		if !r.validUTF8() {
			return
		}
		got, ok := r.appendCanonical(nil)
		want, err := r.marshalCanonical()
		if err != nil {
			require.False(t, ok, "the fast form takes a record the definition refuses: %v", err)
			return
		}
		if !ok {
			return
		}
		require.Equal(t, string(want), string(got))
		require.True(t, utf8.Valid(got))
	})
}

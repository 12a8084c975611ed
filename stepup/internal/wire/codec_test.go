package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// words are the strings the generators draw from: plain ones, and one of
// each kind encoding/json writes escaped or reads specially.
var words = []string{
	"", "t-1", "send_email", "user:dana", "agent:reports", "a b", "q3.csv", "0123456789abcdef0123456789abcdef",
	`say "hi"`, `back\slash`, "<script>", "a&b", "x>y", "tab\there", "nl\n", "\x00", "\x1f", "\x7f",
	"café", "한국어", "العربية", "\u2028", "\u2029", "\xff", "a\xc3", "\U0001F600", "/", "\u00e9\u0301",
}

func word(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return words[r.IntN(8)] // mostly plain, as on the wire
	}
	return words[r.IntN(len(words))]
}

func wordList(r *rand.Rand) []string {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = word(r)
	}
	return out
}

var outputs = []string{
	"", `{"ok":true}`, `[1,2,3]`, `"text"`, `12`, `true`, `null`, `{"a":{"b":[{},[]]}}`, `{"a": 1}`,
	"{\n\"a\":1}", `{"html":"<b>"}`, `{"amp":"&"}`, `{"s":"\u2028"}`, `{"é":1}`, `{"a":}`, `[1,`, `{"q":"\""}`,
	`{"e":"\\"}`, `-0.5e10`, `nul`, `"\ud800"`,
}

func genTime(r *rand.Rand) time.Time {
	switch r.IntN(6) {
	case 0, 1:
		return time.Time{}
	case 2:
		return time.Date(2026, 12, 3, 14, 5, 6, 0, time.UTC)
	case 3:
		return time.Date(2026, 12, 3, 14, 5, 6, r.IntN(1e9), time.FixedZone("", 3600*(r.IntN(27)-13)))
	case 4:
		return time.Date(10000+r.IntN(3), 1, 1, 0, 0, 0, 0, time.UTC) // encoding/json refuses it
	}
	return time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).UTC()
}

func genTicket(r *rand.Rand) Ticket {
	t := Ticket{ID: word(r), Status: word(r), Tool: word(r), ExpiresAt: genTime(r)}
	if r.IntN(2) == 0 {
		t.Digest, t.Reason, t.Next = word(r), word(r), word(r)
	}
	switch r.IntN(4) {
	case 0:
		t.RetryAfterMS = r.Int64()
	case 1:
		t.RetryAfterMS = -r.Int64N(1000)
	case 2:
		t.RetryAfterMS = r.Int64N(10000)
	}
	return t
}

func genResult(r *rand.Rand) Result {
	res := Result{Ticket: word(r), IdempotencyKey: word(r)}
	if o := outputs[r.IntN(len(outputs))]; o != "" || r.IntN(2) == 0 {
		res.Output = json.RawMessage(o)
	}
	return res
}

func genRest(r *rand.Rand) Rest {
	return Rest{Task: word(r), Step: word(r), Session: word(r),
		Principal: Principal{User: word(r), Agent: word(r), Delegations: wordList(r)},
		Taint:     wordList(r), Rationale: word(r), Grant: word(r)}
}

type appender interface {
	AppendJSON([]byte) ([]byte, error)
}

// requireAppendIsMarshal checks that v.AppendJSON writes after a prefix
// what json.Marshal writes, and fails where json.Marshal fails.
func requireAppendIsMarshal(t *testing.T, v appender) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := v.AppendJSON([]byte("prefix"))
	if werr != nil {
		require.Error(t, gerr, "%#v: encoding/json fails (%v), AppendJSON wrote %q", v, werr, got)
		require.Equal(t, "prefix", string(got), "a failed append leaves what it was given")
		return
	}
	require.NoError(t, gerr, "%#v", v)
	require.Equal(t, "prefix"+string(want), string(got), "%#v", v)
}

// TestAppendIsMarshal: the hand-written encoders write what encoding/json
// writes for every message the generators make (plain, escaped, HTML,
// control, non-ASCII and invalid UTF-8 strings; every time zone and a year
// encoding/json refuses; outputs with whitespace, HTML and invalid text),
// and fail where it fails.
func TestAppendIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		requireAppendIsMarshal(t, genTicket(r))
		requireAppendIsMarshal(t, genResult(r))
		requireAppendIsMarshal(t, genRest(r))
	}
	for _, w := range words {
		want, err := json.Marshal(w)
		require.NoError(t, err)
		require.Equal(t, "x"+string(want), string(AppendString([]byte("x"), w)))
	}
}

// TestPlainIsWhatMarshalKeeps: a string is plain exactly when
// encoding/json writes it as it is between quotes, over every one- and
// two-byte string.
func TestPlainIsWhatMarshalKeeps(t *testing.T) {
	check := func(s string) {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		kept := string(b) == `"`+s+`"`
		if plain(s) {
			require.True(t, kept, "%q is plain but encoding/json writes %s", s, b)
		}
		if kept && !plain(s) && s[0] < 0x80 && (len(s) < 2 || s[1] < 0x80) {
			t.Errorf("%q is ASCII that encoding/json keeps, and not plain", s)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
}

// mutate changes a message's text in one of the ways encoding/json reads
// differently from the fast path's plain form, or not at all.
func mutate(r *rand.Rand, raw []byte) []byte {
	s := string(raw)
	if len(s) < 2 {
		return raw
	}
	switch r.IntN(14) {
	case 0: // a member name in other case, or folded
		names := []string{`"id"`, `"status"`, `"tool"`, `"ticket"`, `"output"`, `"expires_at"`, `"retry_after_ms"`, `"idempotency_key"`}
		n := names[r.IntN(len(names))]
		alt := []string{strings.ToUpper(n), strings.Replace(n, "s", "ſ", 1), strings.Replace(n, "k", "\u212a", 1), strings.Replace(n[:2], n[1:2], strings.ToUpper(n[1:2]), 1) + n[2:]}
		s = strings.Replace(s, n, alt[r.IntN(len(alt))], 1)
	case 1: // whitespace somewhere
		i := r.IntN(len(s) + 1)
		s = s[:i] + []string{" ", "\n", "\t", "\r", "\u00a0"}[r.IntN(5)] + s[i:]
	case 2: // an escape for a letter
		if i := strings.IndexAny(s, "abcdefst"); i >= 0 {
			s = s[:i] + fmt.Sprintf(`\u%04x`, s[i]) + s[i+1:]
		}
	case 3: // a member twice
		if i := strings.Index(s, ","); i > 0 {
			s = s[:len(s)-1] + s[i:len(s)-1] + "}"
		}
	case 4: // an unknown member
		s = `{"extra":[1,{"x":"}"}],` + s[1:]
	case 5: // null for a member
		for _, n := range []string{`"tool":`, `"output":`, `"id":`, `"ticket":`} {
			if i := strings.Index(s, n); i >= 0 {
				j := i + len(n)
				k := strings.IndexAny(s[j:], ",}")
				if k < 0 {
					break
				}
				s = s[:j] + "null" + s[j+k:]
				break
			}
		}
	case 6: // a number spelled otherwise
		n := []string{"12", "1.0", "1e3", "-0", "01", "9223372036854775808", "-9223372036854775809", "- 1", "0x10", "1_000", "\"5\"", "5.", "+5"}[r.IntN(13)]
		s = `{"retry_after_ms":` + n + "," + s[1:] // a later one would win
	case 7: // cut short
		s = s[:r.IntN(len(s))]
	case 8: // something after
		s += []string{" ", "\n", "x", "{}", " 1", "\x00"}[r.IntN(6)]
	case 9: // a value of the wrong type
		s = strings.Replace(s, `"status":"`, `"status":[`+`"`, 1)
		s = strings.Replace(s, `"ticket":"`, `"ticket":1,"z":"`, 1)
	case 10: // an invalid byte in a string
		if i := strings.LastIndex(s, `"`); i > 0 {
			s = s[:i] + "\xff" + s[i:]
		}
	case 11: // a time otherwise
		t := []string{`"2026-12-03T14:05:06Z"`, `"2026-12-03 14:05:06Z"`, `"2026-12-03T14:05:06+25:00"`, `"2026-12-03T14:05:06.Z"`,
			`"2026-12-03T14:05:06,5Z"`, `"2026-12-03t14:05:06z"`, `1`, `""`, `"\u0032026-12-03T14:05:06Z"`}[r.IntN(9)]
		s = `{"expires_at":` + t + "," + s[1:]
	case 12: // an output otherwise
		o := outputs[r.IntN(len(outputs))]
		if o == "" {
			o = `"unterminated`
		}
		s = `{"output":` + o + "," + s[1:]
	}
	return []byte(s)
}

func requireDecodeIsUnmarshal[T any](t *testing.T, raw []byte, decode func([]byte, *T) error) {
	t.Helper()
	var want, got T
	werr := json.Unmarshal(raw, &want)
	gerr := decode(raw, &got)
	text := shown(raw)
	if werr != nil {
		require.Error(t, gerr, "%s: encoding/json fails (%v), the decoder read %.200s", text, werr, fmt.Sprintf("%#v", got))
		require.Equal(t, werr.Error(), gerr.Error(), "%s", text)
		return
	}
	require.NoError(t, gerr, "%s", text)
	require.True(t, reflect.DeepEqual(want, got), "%s:\nencoding/json %.500s\ndecoder       %.500s", text,
		fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", got))
}

// shown is raw quoted for a failure's message, its middle cut when long.
func shown(raw []byte) string {
	if len(raw) <= 400 {
		return fmt.Sprintf("%q", raw)
	}
	return fmt.Sprintf("%q ... %q (%d bytes)", raw[:200], raw[len(raw)-200:], len(raw))
}

// TestDecodeIsUnmarshal: the decoders read every text the generators make
// as encoding/json reads it, and fail where and as it fails: messages as
// the gateway writes them, and with member names in other case or folded,
// whitespace, escapes, repeated and unknown members, nulls, numbers and
// times spelled otherwise, invalid bytes, wrong types, and text cut short
// or followed by more.
func TestDecodeIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for i := range 30000 {
		tk, _ := json.Marshal(genTicket(r))
		res, _ := json.Marshal(genResult(r))
		if i%3 != 0 {
			for range 1 + r.IntN(3) {
				tk, res = mutate(r, tk), mutate(r, res)
			}
		}
		var probe Ticket
		if readTicket(tk, &probe) {
			fast++
		}
		requireDecodeIsUnmarshal(t, tk, DecodeTicket)
		requireDecodeIsUnmarshal(t, res, DecodeResult)
	}
	// The fast path is what is tested: it reads thousands of them (most
	// messages generated hold a word encoding/json escapes).
	require.Greater(t, fast, 1000)
}

// nested is a JSON value nested depth deep: at each level an array or
// an object's member (arrays only if arrays is set), spelled with or
// without whitespace, some levels holding a string of brackets too
// (text, not nesting).
func nested(r *rand.Rand, depth int, arrays bool) string {
	var b strings.Builder
	closers := make([]string, 0, depth)
	for range depth {
		pad := []string{"", "", " ", "\n"}[r.IntN(4)]
		text := r.IntN(8) == 0
		switch {
		case arrays || r.IntN(2) == 0:
			b.WriteString("[" + pad)
			if text {
				b.WriteString(`"[{\"]}",` + pad)
			}
			closers = append(closers, pad+"]")
		default:
			b.WriteString("{" + pad)
			if text {
				b.WriteString(`"s":"[{\"]}",`)
			}
			b.WriteString(`"k":` + pad)
			closers = append(closers, pad+"}")
		}
	}
	b.WriteString("1")
	for i := len(closers) - 1; i >= 0; i-- {
		b.WriteString(closers[i])
	}
	return b.String()
}

// TestDecodeIsUnmarshalAtTheDepthLimit: encoding/json refuses a document
// nested deeper than 10,000, the message's own object counted, so an
// output nested 9,999 deep is read and one nested 10,000 deep is not,
// whatever the containers, the spacing, the member's place and the other
// members; the decoder reads and refuses the same.
func TestDecodeIsUnmarshalAtTheDepthLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for depth := 9990; depth <= 10010; depth++ {
		for range 4 {
			out := nested(r, depth, r.IntN(2) == 0)
			raw := []string{`{"output":` + out + `}`, `{"ticket":"t","output":` + out + `,"idempotency_key":"k"}`,
				`{"output":` + out + `,"ticket":"t"}`}[r.IntN(3)]
			requireDecodeIsUnmarshal(t, []byte(raw), DecodeResult)
			if depth < 9999 {
				var got Result
				require.True(t, readResult([]byte(raw), &got), "depth %d is read without encoding/json", depth)
			}
		}
	}
}

// TestDecodeReadsTheGatewaysAnswersItself: the answers the gateway writes
// for plain messages are read without encoding/json.
func TestDecodeReadsTheGatewaysAnswersItself(t *testing.T) {
	tk := Ticket{ID: "0123456789abcdef0123456789abcdef", Status: "pending", Tool: "send_email",
		Digest: "sha256:00ff", ExpiresAt: time.Date(2026, 12, 3, 14, 5, 6, 7, time.UTC), Next: "n", RetryAfterMS: 1500}
	raw, err := tk.AppendJSON(nil)
	require.NoError(t, err)
	var got Ticket
	require.True(t, readTicket(append(raw, '\n'), &got))
	require.Equal(t, tk, got)
	res := Result{Ticket: "t", Output: json.RawMessage(`{"a":[1,"}",{"b":null}],"c":"\"x\\"}`), IdempotencyKey: "k"}
	raw, err = res.AppendJSON(nil)
	require.NoError(t, err)
	var gr Result
	require.True(t, readResult(raw, &gr))
	require.Equal(t, res, gr)
	require.False(t, bytes.Contains(raw, []byte("\n")))
}

func FuzzDecodeTicket(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		raw, _ := json.Marshal(genTicket(r))
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		requireDecodeIsUnmarshal(t, raw, DecodeTicket)
	})
}

func FuzzDecodeResult(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		raw, _ := json.Marshal(genResult(r))
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		requireDecodeIsUnmarshal(t, raw, DecodeResult)
	})
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("t-1", "pending", "send_email", "why", int64(1500), []byte(`{"ok":true}`))
	f.Add("<", "\u2028", "\xff", "\"", int64(-1), []byte("{\n}"))
	f.Fuzz(func(t *testing.T, id, status, tool, reason string, ms int64, output []byte) {
		requireAppendIsMarshal(t, Ticket{ID: id, Status: status, Tool: tool, Reason: reason, RetryAfterMS: ms})
		requireAppendIsMarshal(t, Result{Ticket: id, Output: output, IdempotencyKey: reason})
		requireAppendIsMarshal(t, Rest{Task: id, Session: status, Principal: Principal{User: tool, Agent: reason,
			Delegations: []string{id}}, Taint: []string{reason, tool}})
	})
}

// BenchmarkAnswer is the hop's ticket answer written and read by
// encoding/json and by this package, side by side.
func BenchmarkAnswer(b *testing.B) {
	tk := Ticket{ID: "0123456789abcdef0123456789abcdef", Status: "pending", Tool: "send_email",
		Digest: "sha256:" + strings.Repeat("0f", 32), ExpiresAt: time.Date(2026, 12, 3, 14, 5, 6, 7, time.UTC)}
	raw, err := json.Marshal(tk)
	require.NoError(b, err)
	b.Run("write/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(tk)
		}
	})
	b.Run("write/wire", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			_, _ = tk.AppendJSON(buf)
		}
	})
	b.Run("read/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t Ticket
			_ = json.Unmarshal(raw, &t)
		}
	})
	b.Run("read/wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t Ticket
			_ = DecodeTicket(raw, &t)
		}
	})
}

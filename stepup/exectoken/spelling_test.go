package exectoken_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/exectoken"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// foreignBytes are bytes no execution token holds: every ASCII control
// (tab, CR and LF among them, which encoding/base64 skips), space and
// DEL, the standard base64 alphabet's '+' and '/', padding, and bytes of
// non-ASCII text (a lone continuation byte, é, a no-break space, a
// zero-width space, an invalid byte).
func foreignBytes() []string {
	var out []string
	for b := range 0x20 {
		out = append(out, string(rune(b)))
	}
	return append(out, " ", "\x7f", "+", "/", "=", "\x80", "\u00e9", "\u00a0", "\u200b", "\xff")
}

// respellings returns tok with s inserted at every kind of place: the
// token's ends, the start, middle and end of each segment, and either side
// of each dot.
func respellings(tok, s string) map[string]string {
	p := strings.Split(tok, ".")
	out := map[string]string{
		"before the token": s + tok,
		"after the token":  tok + s,
	}
	for i, name := range []string{"header", "payload", "signature"} {
		seg := p[i]
		with := func(v string) string {
			q := append([]string(nil), p...)
			q[i] = v
			return strings.Join(q, ".")
		}
		out["start of the "+name] = with(s + seg)
		out["middle of the "+name] = with(seg[:len(seg)/2] + s + seg[len(seg)/2:])
		out["end of the "+name] = with(seg + s)
	}
	out["before the first dot"] = p[0] + s + "." + p[1] + "." + p[2]
	out["after the first dot"] = p[0] + "." + s + p[1] + "." + p[2]
	out["before the second dot"] = p[0] + "." + p[1] + s + "." + p[2]
	out["after the second dot"] = p[0] + "." + p[1] + "." + s + p[2]
	out["instead of the first dot"] = p[0] + s + p[1] + "." + p[2]
	return out
}

// TestVerifierRefusesRespelledTokens: a genuine token with any byte
// outside the compact form's alphabet ([A-Za-z0-9_-] and the dots)
// inserted anywhere is refused as malformed, spending nothing, whether or
// not the decoder would have skipped the byte (CR and LF in the
// signature used to verify); the token as issued then verifies once.
func TestVerifierRefusesRespelledTokens(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	tried := 0
	for _, b := range foreignBytes() {
		for where, v := range respellings(tok, b) {
			require.NotEqual(t, tok, v)
			_, err := w.mailer.Verify(ctx, v, effectOf(call))
			assert.ErrorIs(t, err, exectoken.ErrTokenMalformed, "%q %s", b, where)
			tried++
		}
	}
	// CR and LF spelled as a mail or a header fold would.
	p := strings.Split(tok, ".")
	for name, v := range map[string]string{
		"CRLF inside the signature": p[0] + "." + p[1] + "." + p[2][:10] + "\r\n" + p[2][10:40] + "\n\n" + p[2][40:],
		"folded payload":            p[0] + "." + p[1][:20] + "\r\n " + p[1][20:] + "." + p[2],
		"every character on a line": strings.Join(strings.Split(tok, ""), "\n"),
	} {
		_, err := w.mailer.Verify(ctx, v, effectOf(call))
		assert.ErrorIs(t, err, exectoken.ErrTokenMalformed, name)
		tried++
	}
	t.Logf("%d respellings refused", tried)
	assert.Equal(t, store.Approved, w.state(t, tk.ID), "a respelled token spent the ticket")

	_, err := w.mailer.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err, "the token as issued")
}

// TestVerifierBoundsTheToken: a token longer than MaxTokenSize is refused
// as malformed before any of it is decoded (verifying a megabyte token
// allocates far less than decoding it would), and one of exactly
// MaxTokenSize bytes is read as any other.
func TestVerifierBoundsTheToken(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	p := strings.Split(tok, ".")

	// The payload padded with base64url text to the length wanted:
	// refused as too long past the bound, as a bad signature within it.
	padded := func(n int) string {
		return p[0] + "." + p[1] + strings.Repeat("A", n-len(tok)) + "." + p[2]
	}
	for _, n := range []int{exectoken.MaxTokenSize + 1, exectoken.MaxTokenSize + 4, 2 * exectoken.MaxTokenSize, 1 << 20} {
		v := padded(n)
		require.Len(t, v, n)
		_, err := w.mailer.Verify(ctx, v, effectOf(call))
		assert.ErrorIs(t, err, exectoken.ErrTokenMalformed, "%d bytes", n)
		assert.ErrorContains(t, err, "longer than", "%d bytes", n)
	}
	for _, n := range []int{exectoken.MaxTokenSize, exectoken.MaxTokenSize - 1} {
		_, err := w.mailer.Verify(ctx, padded(n), effectOf(call))
		assert.Error(t, err)
		assert.NotContains(t, err.Error(), "longer than", "%d bytes is within the bound", n)
	}

	huge := padded(1 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		_, err := w.mailer.Verify(ctx, huge, effectOf(call))
		require.ErrorIs(t, err, exectoken.ErrTokenMalformed)
	}
	runtime.ReadMemStats(&after)
	// Decoding the payload alone would allocate three quarters of a
	// megabyte per run.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(huge)), "the oversized token was decoded")
	assert.Equal(t, store.Approved, w.state(t, tk.ID))
}

// TestTokenIssuerStaysWithinTheBound: an issuer name long enough to push
// a token past MaxTokenSize makes Issue fail as a configuration error, so
// no gate issues a token its executors refuse, and the longest token
// within the bound verifies.
func TestTokenIssuerStaysWithinTheBound(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk := approved(t, w.Harness, call)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	issue := func(name string) (string, error) {
		ti, err := exectoken.NewTokenIssuer(w.Gate, key, name)
		require.NoError(t, err)
		return ti.Issue(ctx, tk.ID)
	}
	base, err := issue("g")
	require.NoError(t, err)
	// Each three more bytes of the name are four more of the token.
	n := 1 + (exectoken.MaxTokenSize-len(base))*3/4
	longest, name := "", ""
	for l := n - 4; l <= n+4; l++ {
		v := strings.Repeat("g", l)
		tok, err := issue(v)
		if len(tok) > 0 {
			longest, name = tok, v
			require.NoError(t, err)
			assert.LessOrEqual(t, len(tok), exectoken.MaxTokenSize)
			continue
		}
		assert.ErrorIs(t, err, stepup.ErrConfig, "an issuer name of %d bytes", l)
	}
	require.NotEmpty(t, longest)
	assert.Greater(t, len(longest), exectoken.MaxTokenSize-4, "the search reached the bound")
	_, err = issue(name + "gggg")
	assert.ErrorIs(t, err, stepup.ErrConfig, "past the bound")

	v, err := exectoken.NewVerifier(pub, name, "send_email", w.Store, w.Gate,
		exectoken.WithVerifierResolver(canon.FileResolver{Root: w.Dir}))
	require.NoError(t, err)
	_, err = v.Verify(ctx, longest, effectOf(call))
	assert.NoError(t, err, "a %d-byte token", len(longest))
}

// FuzzVerifierTokenSpelling: a genuine token with any one byte inserted
// anywhere never verifies, and one with a byte that is not base64url or a
// dot is refused as malformed.
func FuzzVerifierTokenSpelling(f *testing.F) {
	ctx := context.Background()
	h := stepuptest.NewGate(f, nil)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(f, err)
	issuer, err := exectoken.NewTokenIssuer(h.Gate, key, tokenIssuerName)
	require.NoError(f, err)
	v, err := exectoken.NewVerifier(pub, tokenIssuerName, "read_file", h.Store, h.Gate)
	require.NoError(f, err)
	call := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Principal: agentFor("user:dana")}
	tk, err := h.Gate.Propose(ctx, call)
	require.NoError(f, err)
	tok, err := issuer.Issue(ctx, tk.ID)
	require.NoError(f, err)
	effect := canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Principal: call.Principal,
		PolicyVersion: stepuptest.SeedPolicyVersion, Audience: "read_file"}
	for _, b := range []byte{'\n', '\r', ' ', '+', '=', 0x80, 'A'} {
		f.Add(uint(len(tok)-3), b)
	}
	f.Fuzz(func(t *testing.T, at uint, b byte) {
		i := int(at % uint(len(tok)+1))
		s := tok[:i] + string([]byte{b}) + tok[i:]
		_, err := v.Verify(ctx, s, effect)
		if err == nil {
			t.Fatalf("%q inserted at %d verified", b, i)
		}
		alphabet := b == '-' || b == '_' || b == '.' || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
		if !alphabet && !errors.Is(err, exectoken.ErrTokenMalformed) {
			t.Fatalf("%q inserted at %d: %v", b, i, err)
		}
	})
}

// ExampleMaxTokenSize: a token is a few hundred bytes of base64url and
// dots; anything longer than MaxTokenSize, or spelled with any other
// byte, is refused before it is decoded.
func ExampleMaxTokenSize() {
	g, st, _, id, effect := tokenExample()
	ctx := context.Background()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	issuer, _ := exectoken.NewTokenIssuer(g, key, "gate.example.com")
	token, _ := issuer.Issue(ctx, id)
	mailer, _ := exectoken.NewVerifier(pub, "gate.example.com", "send_email", st, g)

	fmt.Println(len(token) <= exectoken.MaxTokenSize)
	_, err := mailer.Verify(ctx, token+"\n", effect)
	fmt.Println(err)
	long := token + "." + base64.RawURLEncoding.EncodeToString(make([]byte, exectoken.MaxTokenSize))
	_, err = mailer.Verify(ctx, long, effect)
	fmt.Println(err)
	_, err = mailer.Verify(ctx, token, effect)
	fmt.Println(err)
	// Output:
	// true
	// verify token: stepup: execution token malformed: a byte outside base64url and the dots
	// verify token: stepup: execution token malformed: longer than 4096 bytes
	// <nil>
}

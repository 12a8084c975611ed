package httpexec

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/signed"
)

// MaxRequestBytes bounds the body [Verify] reads: the largest effect canon
// seals, and room for the members around it.
const MaxRequestBytes = canon.DefaultMaxBytes + 128<<10

// DefaultWindow is a replay window that suits most tools: a request
// signed more than five minutes before (or after) now is refused.
const DefaultWindow = 5 * time.Minute

// Request is what [Verify] found in a request an [Executor] sent: the
// approved effect exactly as stored, and the idempotency key the tool
// must treat as the effect's identity.
type Request struct {
	// Tool is the tool's catalog name, as signed.
	Tool string
	// IdempotencyKey is the same at every attempt and every re-run of one
	// approval: a key seen before means "this effect again", never a new
	// one. Record it with the effect's outcome, and answer a repeat with
	// the recorded outcome without repeating the effect.
	IdempotencyKey string
	// Ticket is the gate's ticket id, when the gate said it; for the
	// tool's records only.
	Ticket string
	// Digest is the SHA-256 of the canonical effect, the digest the
	// approver's passkey signed (through the challenge).
	Digest canon.Digest
	// Effect is the approved effect: tool, canonical arguments, resolved
	// references, task, principal, policy version.
	Effect canon.Effect
	// Sent is when the attempt was signed.
	Sent time.Time
}

// Verify checks that r came from an [Executor] holding secret, for tool
// (the tool this handler runs), for exactly the effect in its body,
// signed within window of now (either way), and returns what it carries.
// It reads the body (at most [MaxRequestBytes]). It checks, in order: one
// signature header of the documented form, its timestamp within the
// window, the tool and idempotency key headers, the body's size, an
// HMAC-SHA256 over the canonical string that matches one of the header's
// signatures (compared in constant time, every candidate compared), that
// the signed tool is tool, and then a body that is the effect message:
// its effect canonical, hashing to its digest, of the signed tool, under
// the signed key.
//
// The tool is a positional argument because a secret may be shared by
// all of a service's tools: a request the gate signed for one of them
// verifies under that secret at any of them, and only the tool name
// tells them apart. A request signed for another tool is refused with
// [ErrWrongTool].
//
// Within the window a captured request can be sent again; it carries the
// same idempotency key, so a tool that keeps its keys does not repeat the
// effect. Refusals wrap [ErrSecret], [ErrMalformed], [ErrStale],
// [ErrTooLarge], [ErrBadSignature] or [ErrWrongTool].
func Verify(r *http.Request, tool string, secret []byte, window time.Duration, now time.Time) (Request, error) {
	if r.Method != http.MethodPost {
		return Request{}, fmt.Errorf("%w: method is not POST", ErrMalformed)
	}
	if r.ContentLength > MaxRequestBytes {
		return Request{}, ErrTooLarge
	}
	if r.Body == nil {
		return Request{}, fmt.Errorf("%w: no body", ErrMalformed)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		return Request{}, fmt.Errorf("%w: reading the body failed", ErrMalformed)
	}
	return VerifyMessage(r.Header, body, tool, secret, window, now)
}

// VerifyMessage is [Verify] of a request's headers and body already read.
func VerifyMessage(h http.Header, body []byte, tool string, secret []byte, window time.Duration, now time.Time) (Request, error) {
	if !validName(tool) {
		return Request{}, fmt.Errorf("httpexec: the tool to verify for, %q, is not 1 to %d printable ASCII characters", tool, maxNameBytes)
	}
	if len(secret) < MinSecretBytes {
		return Request{}, ErrSecret
	}
	if window <= 0 {
		return Request{}, errors.New("httpexec: the replay window must be positive")
	}
	hs := h.Values(HeaderSignature)
	if len(hs) != 1 {
		return Request{}, fmt.Errorf("%w: want one %s header", ErrMalformed, HeaderSignature)
	}
	t, sigs, err := parseSignature(hs[0])
	if err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	sent := time.Unix(t, 0).UTC()
	if d := now.Sub(sent); d > window || d < -window {
		return Request{}, ErrStale
	}
	signedTool, key, err := names(h)
	if err != nil {
		return Request{}, err
	}
	if len(body) > MaxRequestBytes {
		return Request{}, ErrTooLarge
	}
	want := sign(secret, t, signedTool, key, body)
	ok := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return Request{}, ErrBadSignature
	}
	// Checked once the signature holds, so that the error says what is
	// true: the gate signed this request, for another tool.
	if signedTool != tool {
		return Request{}, fmt.Errorf("%w: signed for %s, received by %s", ErrWrongTool, signedTool, tool)
	}
	req, err := parseMessage(body)
	if err != nil {
		return Request{}, err
	}
	if req.Tool != signedTool || req.IdempotencyKey != key {
		return Request{}, fmt.Errorf("%w: the %s or %s header disagrees with the body", ErrMalformed, HeaderTool, HeaderIdempotencyKey)
	}
	req.Sent = sent
	return req, nil
}

// names reads the tool and idempotency key headers: one of each.
func names(h http.Header) (tool, key string, err error) {
	tools, keys := h.Values(HeaderTool), h.Values(HeaderIdempotencyKey)
	if len(tools) != 1 || !validName(tools[0]) {
		return "", "", fmt.Errorf("%w: want one %s header of printable ASCII", ErrMalformed, HeaderTool)
	}
	if len(keys) != 1 || !validName(keys[0]) {
		return "", "", fmt.Errorf("%w: want one %s header of printable ASCII", ErrMalformed, HeaderIdempotencyKey)
	}
	return tools[0], keys[0], nil
}

// parseMessage reads a body an Executor wrote, refusing anything else:
// unknown or missing members, an effect that is not canonical, a digest
// that is not the effect's.
func parseMessage(body []byte) (Request, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m message
	if err := dec.Decode(&m); err != nil {
		return Request{}, fmt.Errorf("%w: the body is not the effect message", ErrMalformed)
	}
	if dec.More() {
		return Request{}, fmt.Errorf("%w: data after the effect message", ErrMalformed)
	}
	if len(m.Effect) == 0 || !validName(m.IdempotencyKey) || (m.Ticket != "" && !validName(m.Ticket)) {
		return Request{}, fmt.Errorf("%w: the effect message lacks its effect or key", ErrMalformed)
	}
	// The body must be written exactly as an Executor writes it: one
	// spelling, so that no reader sees members another does not.
	if !bytes.Equal(encodeParts(m.Digest, m.Effect, m.IdempotencyKey, m.Ticket), body) {
		return Request{}, fmt.Errorf("%w: the effect message is not in its one written form", ErrMalformed)
	}
	d, err := canon.ParseDigest(m.Digest)
	if err != nil {
		return Request{}, fmt.Errorf("%w: the digest is not 64 hex digits", ErrMalformed)
	}
	eff, err := canon.ParseEffect(m.Effect)
	if err != nil {
		return Request{}, fmt.Errorf("%w: the effect: %w", ErrMalformed, err)
	}
	s, err := canon.Seal(eff)
	if err != nil {
		return Request{}, fmt.Errorf("%w: the effect: %w", ErrMalformed, err)
	}
	// Both must hold: the bytes the tool hashes are the canonical form,
	// and they are the digest the body names.
	if !bytes.Equal(s.Bytes(), m.Effect) || !s.Digest().Equal(d) || !canon.Sum(m.Effect).Equal(d) {
		return Request{}, fmt.Errorf("%w: the effect is not canonical or does not hash to the digest", ErrMalformed)
	}
	return Request{Tool: eff.Tool, IdempotencyKey: m.IdempotencyKey, Ticket: m.Ticket, Digest: d, Effect: eff}, nil
}

// parseSignature parses a signature header (see [signed.ParseHeader]).
func parseSignature(h string) (int64, [][]byte, error) { return signed.ParseHeader(h) }

package passkey

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/ticketstore"
	"github.com/agentstepup/asu/store"
)

// Sign-in defaults.
const (
	// DefaultSignInTTL is how long a sign-in ceremony may take, from
	// [SignIn.Begin] to [SignIn.Finish], when [SignInTTL] does not say.
	DefaultSignInTTL = 2 * time.Minute
	// MaxSignInTTL is the longest [SignInTTL] accepts.
	MaxSignInTTL = 10 * time.Minute
	// DefaultSignInsInFlight bounds the sign-ins a [SignIn] remembers as
	// finished until their state expires, when [SignInsInFlight] does not
	// say; past it, sign-ins are refused until states expire.
	DefaultSignInsInFlight = 10000
)

// signInTag separates sign-in challenges from ticket challenges
// ("asu/v1/approve", "asu/v1/deny") and from every other hash asu makes:
// a sign-in assertion never verifies as an approval or a denial, nor an
// approval as a sign-in.
const signInTag = "asu/v1/signin\x00"

// signInStateTag separates the MAC over a sign-in state from every other
// MAC made with the same key (credential seals, the gate's MACs).
const signInStateTag = "asu/v1/signin-state\x00"

// signInStateSize is the size of a decoded state: the random part, the
// expiry, and the MAC over both.
const signInStateSize = 32 + 8 + sha256.Size

// maxSignInState bounds the state a client hands back.
const maxSignInState = 256

// ErrSignIn means a sign-in state is malformed, was not made by this
// [SignIn] (or another holding the same key), expired, or was already
// used: begin the sign-in again.
var ErrSignIn = errors.New("passkey: sign-in state unknown, expired or used")

// SignedIn is who a sign-in proved: the approver and the credential that
// signed. It says nothing about any ticket.
type SignedIn struct {
	User         string
	CredentialID []byte
}

// SignIn is the passkey sign-in of an approval site, separate from
// approving: it proves that a person holds an enrolled credential, so a
// site can show them their queue. It never decides a ticket. Its
// challenge is
//
//	SHA-256("asu/v1/signin" ‖ 0x00 ‖ random[32] ‖ uint64be(expiry unix seconds))
//
// which no ticket's approve or deny challenge can equal (their tags
// differ), so a sign-in assertion is refused as an approval and an
// approval's assertion is refused as a sign-in.
//
// No server state is kept between [SignIn.Begin] and [SignIn.Finish]: the
// state Begin returns carries the random part and the expiry under a MAC
// of the SignIn's key, so replicas given the same key ([SignInKey]) finish
// each other's sign-ins. Each state signs in at most once per process: a
// finished state is remembered until it expires (at most
// [DefaultSignInsInFlight] of them), and only after its assertion
// verified, so requests without a passkey fill nothing. The assertion is
// verified as the [Approver] verifies approvals: the same credential
// store, relying party, user verification, seal and signature counter.
// A SignIn is safe for concurrent use.
type SignIn struct {
	w   *Approver
	key []byte
	ttl time.Duration
	now func() time.Time
	max int

	mu   sync.Mutex
	used map[[32]byte]time.Time // random part of a finished state -> its expiry
}

// SignInOption configures a [SignIn].
type SignInOption func(*SignIn) error

// SignInKey sets the key (at least [MinSealKeySize] bytes) that sign-in
// states are MACed with; by default a random key per SignIn, so a state
// finishes only in the process that began it. Replicas behind one load
// balancer share a key. The gate's key or the seal key may serve: the MAC
// is labelled apart from theirs.
func SignInKey(key []byte) SignInOption {
	return func(s *SignIn) error {
		if len(key) < MinSealKeySize {
			return fmt.Errorf("%w: sign-in key must be at least %d bytes", stepup.ErrConfig, MinSealKeySize)
		}
		s.key = bytes.Clone(key)
		return nil
	}
}

// SignInTTL sets how long a sign-in ceremony may take (default
// [DefaultSignInTTL], at most [MaxSignInTTL]).
func SignInTTL(d time.Duration) SignInOption {
	return func(s *SignIn) error {
		if d <= 0 || d > MaxSignInTTL {
			return fmt.Errorf("%w: sign-in TTL must be positive and at most %s", stepup.ErrConfig, MaxSignInTTL)
		}
		s.ttl = d
		return nil
	}
}

// SignInClock sets the clock sign-in states expire by (default time.Now).
func SignInClock(now func() time.Time) SignInOption {
	return func(s *SignIn) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", stepup.ErrConfig)
		}
		s.now = now
		return nil
	}
}

// SignInsInFlight bounds how many finished sign-ins are remembered until
// their states expire (default [DefaultSignInsInFlight]); past it, a
// sign-in is refused with [ErrSignIn] until states expire.
func SignInsInFlight(n int) SignInOption {
	return func(s *SignIn) error {
		if n <= 0 {
			return fmt.Errorf("%w: sign-ins in flight must be positive", stepup.ErrConfig)
		}
		s.max = n
		return nil
	}
}

// NewSignIn returns the sign-in of the credentials approver verifies:
// the same store, relying party and seal requirement.
func NewSignIn(approver *Approver, opts ...SignInOption) (*SignIn, error) {
	if approver == nil {
		return nil, fmt.Errorf("%w: sign-in needs the passkey approver", stepup.ErrConfig)
	}
	s := &SignIn{w: approver, ttl: DefaultSignInTTL, now: time.Now, max: DefaultSignInsInFlight,
		used: map[[32]byte]time.Time{}}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.key == nil {
		s.key = make([]byte, 32)
		if _, err := rand.Read(s.key); err != nil {
			return nil, fmt.Errorf("sign-in: %w", err)
		}
	}
	return s, nil
}

// Begin starts a sign-in: it returns PublicKeyCredentialRequestOptions
// JSON (for navigator.credentials.get) with a fresh sign-in challenge, no
// allowed credentials (the browser offers the site's discoverable
// passkeys) and user verification required, and the opaque state to hand
// back to [SignIn.Finish] with the answer, within the sign-in TTL.
func (s *SignIn) Begin(ctx context.Context) (json.RawMessage, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	var random [32]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, "", fmt.Errorf("sign-in: %w", err)
	}
	exp := s.now().Add(s.ttl).Unix()
	challenge := signInChallenge(random, exp)
	raw, err := json.Marshal(protocol.PublicKeyCredentialRequestOptions{
		Challenge:        protocol.URLEncodedBase64(challenge[:]),
		Timeout:          int(s.ttl / time.Millisecond),
		RelyingPartyID:   s.w.rp.ID,
		UserVerification: protocol.VerificationRequired,
	})
	if err != nil {
		return nil, "", fmt.Errorf("sign-in: %w", err)
	}
	state := make([]byte, 0, signInStateSize)
	state = append(state, random[:]...)
	state = binary.BigEndian.AppendUint64(state, uint64(exp))
	state = append(state, s.mac(random, exp)...)
	return raw, b64.EncodeToString(state), nil
}

// Finish verifies answer (the JSON of navigator.credentials.get) against
// the challenge of state, which [SignIn.Begin] returned, and returns who
// signed in. It fails with [ErrSignIn] for a state that is malformed,
// not this SignIn's, expired or already used; like [Approver.Verify]
// otherwise ([*AssertionError], [ErrUnknownCredential], [ErrCounter],
// stepup.ErrRevoked). Agents and the gate's reserved names never sign in.
func (s *SignIn) Finish(ctx context.Context, state string, answer []byte) (SignedIn, error) {
	random, exp, err := s.open(state)
	if err != nil {
		return SignedIn{}, err
	}
	now := s.now()
	if !now.Before(time.Unix(exp, 0)) {
		return SignedIn{}, fmt.Errorf("sign-in: %w: the sign-in expired", ErrSignIn)
	}
	s.mu.Lock()
	_, seen := s.used[random]
	s.mu.Unlock()
	if seen {
		return SignedIn{}, fmt.Errorf("sign-in: %w: the sign-in was already used", ErrSignIn)
	}
	challenge := signInChallenge(random, exp)
	cred, _, err := s.w.check(ctx, challenge[:], answer, func(user string) error {
		if err := checkApprover(user); err != nil {
			return fmt.Errorf("sign-in: %w", err)
		}
		return nil
	}, s.w.creds.AdvanceSignCount) // durable: no decision follows a sign-in
	if err != nil {
		return SignedIn{}, err
	}
	// Only a verified assertion spends its state: requests without a
	// passkey fill nothing. Of two racing with one state, one wins.
	if err := s.spend(random, exp, now); err != nil {
		return SignedIn{}, err
	}
	return SignedIn{User: cred.User, CredentialID: bytes.Clone(cred.ID)}, nil
}

// Recheck reports whether who still stands: its credential is enrolled
// for who.User, unrevoked and (with [RequireSeal]) sealed. A site calls it
// on every request of a signed-in session, so revoking the credential
// ends the session. It fails with stepup.ErrRevoked for a revoked
// credential and [ErrUnknownCredential] for any other mismatch.
func (s *SignIn) Recheck(ctx context.Context, who SignedIn) error {
	cred, err := s.w.creds.GetCredential(ctx, who.CredentialID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("sign-in: %w", ErrUnknownCredential)
	case err != nil:
		return ticketstore.Err("sign-in", err)
	case !cred.RevokedAt.IsZero():
		return fmt.Errorf("sign-in: %w: the credential was revoked", stepup.ErrRevoked)
	case cred.User != who.User:
		return fmt.Errorf("sign-in: %w", ErrUnknownCredential)
	}
	if err := s.w.seal.sealed(ctx, cred); err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	return nil
}

// spend records random as used until exp, or refuses it as used or the
// table as full.
func (s *SignIn) spend(random [32]byte, exp int64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.used[random]; seen {
		return fmt.Errorf("sign-in: %w: the sign-in was already used", ErrSignIn)
	}
	if len(s.used) >= s.max {
		for r, until := range s.used {
			if !now.Before(until) {
				delete(s.used, r)
			}
		}
		if len(s.used) >= s.max {
			return fmt.Errorf("sign-in: %w: too many sign-ins at once; try again shortly", ErrSignIn)
		}
	}
	s.used[random] = time.Unix(exp, 0)
	return nil
}

// open checks state's MAC and returns its random part and expiry.
func (s *SignIn) open(state string) ([32]byte, int64, error) {
	var random [32]byte
	if len(state) > maxSignInState {
		return random, 0, fmt.Errorf("sign-in: %w: malformed state", ErrSignIn)
	}
	raw, err := b64.DecodeString(state)
	if err != nil || len(raw) != signInStateSize {
		return random, 0, fmt.Errorf("sign-in: %w: malformed state", ErrSignIn)
	}
	copy(random[:], raw[:32])
	exp := int64(binary.BigEndian.Uint64(raw[32:40]))
	if exp <= 0 || !hmac.Equal(raw[40:], s.mac(random, exp)) {
		return random, 0, fmt.Errorf("sign-in: %w: the state was not made here", ErrSignIn)
	}
	return random, exp, nil
}

// mac is the MAC over a state's random part and expiry.
func (s *SignIn) mac(random [32]byte, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(signInStateTag))
	m.Write(random[:])
	m.Write(binary.BigEndian.AppendUint64(nil, uint64(exp)))
	return m.Sum(nil)
}

// signInChallenge is SHA-256(signInTag ‖ random ‖ uint64be(exp)).
func signInChallenge(random [32]byte, exp int64) [32]byte {
	h := sha256.New()
	h.Write([]byte(signInTag))
	h.Write(random[:])
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(exp)))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

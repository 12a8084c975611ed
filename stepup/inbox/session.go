package inbox

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentstepup/asu/stepup/passkey"
)

// sessionTag separates session MACs from every other MAC made with the
// same key.
const sessionTag = "asu/v1/inbox-session\x00"

// cookieVersion starts every session cookie's value.
const cookieVersion = "v1."

// Bounds of a session cookie's fields: a principal id and a WebAuthn
// credential id (at most 1023 bytes) fit well inside them.
const (
	maxUserBytes   = 512
	maxCredBytes   = 1023
	maxCookieBytes = 4096
	sidSize        = 16
)

// maxEnded bounds the sign-outs this process remembers: a cache in front
// of the store, which keeps every sign-out. Past it, the one expiring
// first is forgotten here, and the store answers for it.
const maxEnded = 10000

// errNoSession is any reason a request carries no live session; the
// caller is told only that it must sign in.
var errNoSession = errors.New("inbox: no live session")

// session is a signed-in approver, as their cookie carries it.
type session struct {
	id      [sidSize]byte
	user    string
	cred    []byte
	expires time.Time
}

func (s session) who() passkey.SignedIn {
	return passkey.SignedIn{User: s.user, CredentialID: bytes.Clone(s.cred)}
}

// signOuts is where sign-outs are recorded for every replica: the gate's
// store, through the [Desk] ([gate.Desk.EndSession] and
// [gate.Desk.SessionEnded]).
type signOuts interface {
	EndSession(ctx context.Context, id []byte, until time.Time) error
	SessionEnded(ctx context.Context, id []byte, until time.Time) (bool, error)
}

// sessions makes and opens session cookies, and records sign-outs in the
// store, remembering them here too so that a session signed out is
// refused without asking the store again.
type sessions struct {
	key    []byte
	record signOuts

	mu    sync.Mutex
	ended map[[sidSize]byte]signedOut
}

// signedOut is a sign-out as this process remembers it.
type signedOut struct {
	expires time.Time // when the session would have expired anyway
	// stored is whether the store has it. One it does not have (the write
	// failed) is the only record of the sign-out: it is never forgotten
	// before it expires, and it is written again whenever its cookie
	// comes back.
	stored bool
}

func newSessions(key []byte, record signOuts) *sessions {
	return &sessions{key: bytes.Clone(key), record: record, ended: map[[sidSize]byte]signedOut{}}
}

// seal returns the cookie value of a new session of who until expires.
func (ss *sessions) seal(who passkey.SignedIn, expires time.Time) (string, session, error) {
	s := session{user: who.User, cred: bytes.Clone(who.CredentialID), expires: time.Unix(expires.Unix(), 0).UTC()}
	if len(s.user) == 0 || len(s.user) > maxUserBytes || len(s.cred) == 0 || len(s.cred) > maxCredBytes {
		return "", session{}, fmt.Errorf("%w: the credential does not fit a session", errNoSession)
	}
	if _, err := rand.Read(s.id[:]); err != nil {
		return "", session{}, err
	}
	payload := s.encode()
	return cookieVersion + base64.RawURLEncoding.EncodeToString(append(payload, ss.mac(payload)...)), s, nil
}

// open checks a cookie value's MAC and returns its session, whatever its
// expiry; the caller judges that.
func (ss *sessions) open(value string) (session, error) {
	rest, ok := strings.CutPrefix(value, cookieVersion)
	if !ok || len(value) > maxCookieBytes {
		return session{}, fmt.Errorf("%w: malformed cookie", errNoSession)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < sha256.Size {
		return session{}, fmt.Errorf("%w: malformed cookie", errNoSession)
	}
	payload, mac := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(mac, ss.mac(payload)) {
		return session{}, fmt.Errorf("%w: the cookie was not made here", errNoSession)
	}
	s, ok := decodeSession(payload)
	if !ok {
		return session{}, fmt.Errorf("%w: malformed cookie", errNoSession)
	}
	return s, nil
}

// live reports whether s is unexpired at now and not signed out, here or
// on any replica sharing the store. An error means the store could not
// say: whether s stands is unknown.
func (ss *sessions) live(ctx context.Context, s session, now time.Time) (bool, error) {
	if !now.Before(s.expires) {
		return false, nil
	}
	ss.mu.Lock()
	out, known := ss.ended[s.id]
	ss.mu.Unlock()
	if known {
		if !out.stored {
			// Signed out here while the store refused it: the other
			// replicas learn of it once the store takes it.
			_ = ss.store(ctx, s, now)
		}
		return false, nil
	}
	ended, err := ss.record.SessionEnded(ctx, s.id[:], s.expires)
	if err != nil {
		return false, err
	}
	if ended {
		ss.remember(s, true, now)
	}
	return !ended, nil
}

// end signs s out: at once in this process, and in the store, for every
// replica. An error means the store does not have it: s is refused here,
// and the store is asked again whenever its cookie comes back, but until
// then the other replicas still open it.
func (ss *sessions) end(ctx context.Context, s session, now time.Time) error {
	if !now.Before(s.expires) {
		return nil // over anyway, everywhere
	}
	ss.remember(s, false, now)
	return ss.store(ctx, s, now)
}

// store records the sign-out of s in the store.
func (ss *sessions) store(ctx context.Context, s session, now time.Time) error {
	if err := ss.record.EndSession(ctx, s.id[:], s.expires); err != nil {
		return err
	}
	ss.remember(s, true, now)
	return nil
}

// remember keeps the sign-out of s in this process, stored or not. Past
// maxEnded it forgets the sign-outs of expired sessions and then the
// stored one expiring first, whose record the store keeps: forgetting
// one costs a read of the store, never a session revived. A sign-out the
// store does not have is never forgotten before it expires; there are no
// more of them than sessions signed out while the store refused them.
func (ss *sessions) remember(s session, stored bool, now time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if out, ok := ss.ended[s.id]; ok {
		out.stored = out.stored || stored
		ss.ended[s.id] = out
		return
	}
	if len(ss.ended) >= maxEnded {
		var first [sidSize]byte
		var at time.Time
		for id, out := range ss.ended {
			switch {
			case !now.Before(out.expires):
				delete(ss.ended, id)
			case out.stored && (at.IsZero() || out.expires.Before(at)):
				first, at = id, out.expires
			}
		}
		if len(ss.ended) >= maxEnded && !at.IsZero() {
			delete(ss.ended, first)
		}
	}
	ss.ended[s.id] = signedOut{expires: s.expires, stored: stored}
}

func (ss *sessions) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, ss.key)
	m.Write([]byte(sessionTag))
	m.Write(payload)
	return m.Sum(nil)
}

// encode lays s out as id ‖ uint64be(expiry unix seconds) ‖
// uint16be(len user) ‖ user ‖ uint16be(len credential) ‖ credential.
func (s session) encode() []byte {
	b := make([]byte, 0, sidSize+8+2+len(s.user)+2+len(s.cred))
	b = append(b, s.id[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(s.expires.Unix()))
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.user)))
	b = append(b, s.user...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.cred)))
	return append(b, s.cred...)
}

func decodeSession(b []byte) (session, bool) {
	var s session
	if len(b) < sidSize+8+2 {
		return s, false
	}
	copy(s.id[:], b)
	b = b[sidSize:]
	exp := binary.BigEndian.Uint64(b)
	b = b[8:]
	field := func() ([]byte, bool) {
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, false
		}
		f := b[2 : 2+n]
		b = b[2+n:]
		return f, true
	}
	user, ok1 := field()
	cred, ok2 := field()
	if !ok1 || !ok2 || len(b) != 0 || exp == 0 || exp > 1<<62 ||
		len(user) == 0 || len(user) > maxUserBytes || len(cred) == 0 || len(cred) > maxCredBytes {
		return session{}, false
	}
	s.user, s.cred, s.expires = string(user), bytes.Clone(cred), time.Unix(int64(exp), 0).UTC()
	return s, true
}

package inbox

import (
	"bytes"
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

// maxEnded bounds the sessions remembered as signed out before they
// expire; past it, the one expiring first is forgotten.
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

// sessions makes and opens session cookies, and remembers sign-outs.
type sessions struct {
	key []byte

	mu    sync.Mutex
	ended map[[sidSize]byte]time.Time // signed out -> when the session would have expired
}

func newSessions(key []byte) *sessions {
	return &sessions{key: bytes.Clone(key), ended: map[[sidSize]byte]time.Time{}}
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

// live reports whether s is unexpired at now and not signed out.
func (ss *sessions) live(s session, now time.Time) bool {
	if !now.Before(s.expires) {
		return false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, out := ss.ended[s.id]
	return !out
}

// end signs s out: its cookie opens no session again, in this process,
// until it would have expired anyway.
func (ss *sessions) end(s session, now time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.ended) >= maxEnded {
		var first [sidSize]byte
		var at time.Time
		for id, exp := range ss.ended {
			if !now.Before(exp) {
				delete(ss.ended, id)
			} else if at.IsZero() || exp.Before(at) {
				first, at = id, exp
			}
		}
		if len(ss.ended) >= maxEnded {
			delete(ss.ended, first)
		}
	}
	ss.ended[s.id] = s.expires
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

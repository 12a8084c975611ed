package gateway

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// RuntimeToken is the bearer token one runtime authenticates with, the
// agent principal it acts as, and the users it acts for. A call whose
// Principal.Agent names another agent, or whose Principal.User is not one
// of Users, is refused: one agent cannot propose as another, and a
// hijacked runtime cannot spread its requests over other users' rate
// limits, fill their pending caps, get them locked out, or lean on a grant
// another user issued.
type RuntimeToken struct {
	// Token is the secret, at least 32 characters; [NewRuntimeToken] makes
	// one. Only its SHA-256 is kept in memory.
	Token string
	// SHA256 is the token's SHA-256 ([HashRuntimeToken]), for a gateway
	// that keeps tokens only hashed, in a file or a secret store: set it
	// instead of Token. It must be the hash of a token [NewRuntimeToken]
	// made, since a hash does not show how long its token was.
	SHA256 [32]byte
	// Agent is the agent principal, "agent:..." as in canon.Principal.
	Agent string
	// Users are the users the runtime acts for; at least one. A call the
	// runtime proposes names one of them as its user, and names no other
	// person among its delegations (a delegation never decides the call it
	// is part of, so naming others would choose who may).
	Users []string
}

// runtime is who a presented token authenticates.
type runtime struct {
	agent   string
	users   map[string]bool
	waiters chan struct{} // one slot per open long poll
}

// NewRuntimeToken returns a fresh random bearer token (32 bytes from
// crypto/rand, base64url).
func NewRuntimeToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("gateway: runtime token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashRuntimeToken returns the SHA-256 of token, as [RuntimeToken].SHA256
// holds it. A token from [NewRuntimeToken] has 256 random bits, so its
// hash needs no salt or stretching: it cannot be guessed back.
func HashRuntimeToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// minTokenLen is the shortest accepted token: 32 characters of base64url
// hold 192 bits.
const minTokenLen = 32

// tokenSet recognises runtime tokens by hash, in constant time.
type tokenSet struct {
	hashes   [][32]byte
	runtimes []runtime
}

func newTokenSet(tokens []RuntimeToken) (*tokenSet, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: no runtime tokens", stepup.ErrConfig)
	}
	s := &tokenSet{}
	seen := map[[32]byte]bool{}
	for _, t := range tokens {
		hashed := t.SHA256 != [32]byte{}
		switch {
		case hashed && t.Token != "":
			return nil, fmt.Errorf("%w: runtime token for %q gives both the token and its hash", stepup.ErrConfig, t.Agent)
		case !hashed && len(t.Token) < minTokenLen:
			return nil, fmt.Errorf("%w: a runtime token is shorter than %d characters", stepup.ErrConfig, minTokenLen)
		case !strings.HasPrefix(t.Agent, canon.PrefixAgent) || canon.CheckPrincipalID(t.Agent) != nil:
			return nil, fmt.Errorf("%w: runtime token for %q: agents are named \"agent:...\" in lowercase ASCII", stepup.ErrConfig, t.Agent)
		case len(t.Users) == 0:
			return nil, fmt.Errorf("%w: runtime token for %q names no users it acts for", stepup.ErrConfig, t.Agent)
		}
		users := make(map[string]bool, len(t.Users))
		for _, u := range t.Users {
			if !strings.HasPrefix(u, canon.PrefixUser) || canon.CheckPrincipalID(u) != nil {
				return nil, fmt.Errorf("%w: runtime token for %q: %q is not a user (\"user:...\" in lowercase ASCII)", stepup.ErrConfig, t.Agent, u)
			}
			users[u] = true
		}
		h := t.SHA256
		if !hashed {
			h = HashRuntimeToken(t.Token)
		}
		if seen[h] {
			return nil, fmt.Errorf("%w: the same runtime token twice", stepup.ErrConfig)
		}
		seen[h] = true
		s.hashes = append(s.hashes, h)
		s.runtimes = append(s.runtimes, runtime{agent: t.Agent, users: users})
	}
	return s, nil
}

// runtime returns who a presented token authenticates.
func (s *tokenSet) runtime(presented string) (runtime, bool) {
	i := matchToken(presented, s.hashes)
	if i < 0 {
		return runtime{}, false
	}
	return s.runtimes[i], true
}

// matchToken returns the index of the hash in hashes that presented's
// SHA-256 equals, or -1; an empty token matches none. Every hash is
// compared, in constant time and without stopping at a match, so timing
// says nothing about which token or how much of it matched, nor, since
// hashes are compared, about a token's length.
func matchToken(presented string, hashes [][32]byte) int {
	h := sha256.Sum256([]byte(presented))
	found := -1
	for i := range hashes {
		if subtle.ConstantTimeCompare(h[:], hashes[i][:]) == 1 {
			found = i
		}
	}
	if presented == "" {
		return -1
	}
	return found
}

// bearer extracts the token of an "Authorization: Bearer ..." header:
// the scheme in any case (RFC 9110 section 11.1), one space, and the
// token with the white space around it trimmed; "" for any other header.
func bearer(header string) string {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// RequireBearer admits a request to next only when its Authorization
// header carries token as a bearer token, read as the agent API reads a
// runtime token: the scheme "Bearer" in any case (RFC 9110 section
// 11.1), then the token. Every other request is refused with 401 and a
// WWW-Authenticate challenge naming realm. The token is compared by its
// SHA-256 in constant time, so neither its bytes nor its length show in
// the time taken; an empty token admits nothing. Every response, the
// refusals included, carries the approval site's headers, as [Metrics]
// sets them. It guards an operator's listener: the metrics and the
// approval figures ([Metrics.ServeFigures]) name approvers.
func RequireBearer(token []byte, realm string, next http.Handler) http.Handler {
	want := [][32]byte{sha256.Sum256(token)}
	if len(token) == 0 {
		want = nil
	}
	challenge := "Bearer realm=" + strconv.Quote(realm)
	return secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if matchToken(bearer(r.Header.Get("Authorization")), want) < 0 {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
}

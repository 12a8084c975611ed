package gateway

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
)

// RuntimeToken is the bearer token one runtime authenticates with, and the
// agent principal it acts as: a call whose Principal.Agent names another
// agent is refused, so one agent cannot propose as another.
type RuntimeToken struct {
	// Token is the secret, at least 32 characters; [NewRuntimeToken] makes
	// one. Only its SHA-256 is kept in memory.
	Token string
	// Agent is the agent principal, "agent:..." as in canon.Principal.
	Agent string
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

// minTokenLen is the shortest accepted token: 32 characters of base64url
// hold 192 bits.
const minTokenLen = 32

// tokenSet recognises runtime tokens by hash, in constant time.
type tokenSet struct {
	hashes [][32]byte
	agents []string
}

func newTokenSet(tokens []RuntimeToken) (*tokenSet, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: no runtime tokens", ErrConfig)
	}
	s := &tokenSet{}
	seen := map[[32]byte]bool{}
	for _, t := range tokens {
		switch {
		case len(t.Token) < minTokenLen:
			return nil, fmt.Errorf("%w: a runtime token is shorter than %d characters", ErrConfig, minTokenLen)
		case !strings.HasPrefix(t.Agent, "agent:") || len(t.Agent) == len("agent:"):
			return nil, fmt.Errorf("%w: runtime token for %q: agents are named \"agent:...\"", ErrConfig, t.Agent)
		}
		h := sha256.Sum256([]byte(t.Token))
		if seen[h] {
			return nil, fmt.Errorf("%w: the same runtime token twice", ErrConfig)
		}
		seen[h] = true
		s.hashes = append(s.hashes, h)
		s.agents = append(s.agents, t.Agent)
	}
	return s, nil
}

// agent returns the agent a presented token acts as. Every configured
// hash is compared, without stopping at a match, so timing says nothing
// about which token or how much of it matched.
func (s *tokenSet) agent(presented string) (string, bool) {
	h := sha256.Sum256([]byte(presented))
	found := -1
	for i := range s.hashes {
		if subtle.ConstantTimeCompare(h[:], s.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 || presented == "" {
		return "", false
	}
	return s.agents[found], true
}

// bearer extracts the token of an "Authorization: Bearer ..." header.
func bearer(header string) string {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

package canon

import (
	"fmt"
	"strings"
)

// Principal id prefixes. A principal id is "kind:name": the kind says what
// the name names, and no two kinds share an id.
const (
	PrefixUser  = "user:"  // a person a call runs on behalf of, or who approves
	PrefixAgent = "agent:" // an agent that proposes calls; never approves
	PrefixGroup = "group:" // an approver group a policy names
	// PrefixPolicy, PrefixGrant and PrefixModel are reserved for the
	// gate, which records "policy:<version>", "grant:<id>" or
	// "model:<name>" as the approver of a call it allowed itself, a grant
	// covered, or a model approver decided. They are never accepted from
	// outside ([Reserved]), and a model is never a person.
	PrefixPolicy = "policy:"
	PrefixGrant  = "grant:"
	PrefixModel  = "model:"
)

// MaxPrincipalName is the longest name after the prefix, in bytes.
const MaxPrincipalName = 128

// CheckPrincipalID checks the one syntax of principal ids: lowercase ASCII
// "kind:name", kind one of user, agent, group, policy, grant and model, name 1 to
// [MaxPrincipalName] bytes of a-z, 0-9 and ". _ @ + -", starting with a
// letter or digit. So "user:dana", "agent:reports-bot" and
// "user:erin@example.com" are ids; "User:dana", "user:Dana", "аgent:x"
// (Cyrillic а), fullwidth letters, dotless ı, "user: dana", zero-width
// characters and any other spelling that a person could read as one of
// them are not. Refusals wrap [ErrPrincipal] and never quote s.
//
// A syntactically valid id may still be [Reserved]: where ids come from
// outside the gate, check both.
func CheckPrincipalID(s string) error {
	kind, name, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("%w: no kind prefix", ErrPrincipal)
	}
	switch kind + ":" {
	case PrefixUser, PrefixAgent, PrefixGroup, PrefixPolicy, PrefixGrant, PrefixModel:
	default:
		return fmt.Errorf("%w: kind is not user, agent, group, policy, grant or model", ErrPrincipal)
	}
	if name == "" || len(name) > MaxPrincipalName {
		return fmt.Errorf("%w: name is not 1 to %d characters", ErrPrincipal, MaxPrincipalName)
	}
	if !isLowerAlnum(name[0]) {
		return fmt.Errorf("%w: name does not start with a lowercase letter or digit", ErrPrincipal)
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLowerAlnum(c) && strings.IndexByte("._@+-", c) < 0 {
			return fmt.Errorf("%w: name holds a character other than a-z, 0-9 and ._@+-", ErrPrincipal)
		}
	}
	return nil
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// Reserved reports whether id has a kind only the gate may write:
// policy:, grant: and model:. It looks at the prefix only: "policy:" with any name,
// valid or not, is reserved.
func Reserved(id string) bool {
	return strings.HasPrefix(id, PrefixPolicy) || strings.HasPrefix(id, PrefixGrant) ||
		strings.HasPrefix(id, PrefixModel)
}

// Check reports whether p names a user by a "user:" id, an agent by an
// "agent:" id, and each delegation by a valid id that is not [Reserved].
// Refusals wrap [ErrPrincipal] and say which part failed, never its text.
func (p Principal) Check() error {
	if err := checkKind(p.User, PrefixUser); err != nil {
		return fmt.Errorf("user: %w", err)
	}
	if err := checkKind(p.Agent, PrefixAgent); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	for i, d := range p.Delegations {
		if err := CheckPrincipalID(d); err != nil {
			return fmt.Errorf("delegation %d: %w", i, err)
		}
		if Reserved(d) {
			return fmt.Errorf("delegation %d: %w: reserved kind", i, ErrPrincipal)
		}
	}
	return nil
}

func checkKind(id, prefix string) error {
	if err := CheckPrincipalID(id); err != nil {
		return err
	}
	if !strings.HasPrefix(id, prefix) {
		return fmt.Errorf("%w: not a %s id", ErrPrincipal, strings.TrimSuffix(prefix, ":"))
	}
	return nil
}

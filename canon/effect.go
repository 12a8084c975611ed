package canon

import (
	"encoding/json"
	"unicode/utf8"
)

// Effect is everything that determines what a tool call does. Its canonical
// JSON, and so its [Digest], is what an approver's passkey signs (through the
// challenge) and what Execute re-checks before the call runs.
//
// The JSON field names are part of the receipt format: third parties re-hash
// the effect object they find in a receipt, so the names never change.
// Every field is always present in the canonical form; empty lists are [].
type Effect struct {
	// Tool is the catalog name of the tool, e.g. "send_email".
	Tool string `json:"tool"`
	// Args are the call's arguments: a JSON object, canonicalized.
	Args json.RawMessage `json:"args"`
	// Refs are the references the arguments name, resolved to content
	// hashes where they could be. A changed file changes the digest.
	Refs []Ref `json:"refs"`
	// Task and Step identify the unit of work that proposed the call.
	Task string `json:"task"`
	Step string `json:"step"`
	// Principal is on whose behalf the call runs.
	Principal Principal `json:"principal"`
	// PolicyVersion is the version of the policy that decided the call.
	PolicyVersion string `json:"policy_version"`
	// Audience names the executor that runs the call.
	Audience string `json:"audience"`
}

// Principal is the chain of parties a call acts for: the user, the agent,
// and any delegations in between, outermost first.
type Principal struct {
	User        string   `json:"user"`
	Agent       string   `json:"agent"`
	Delegations []string `json:"delegations"`
}

// Canonical returns the RFC 8785 form of e. It fails with [ErrNotObject] when
// Args is not a JSON object, and with the other sentinels when Args cannot be
// hashed faithfully. It seals e and copies the bytes out: a caller that
// needs the digest or the arguments too should call [Seal] once instead.
func (e Effect) Canonical() ([]byte, error) {
	s, err := Seal(e)
	if err != nil {
		return nil, err
	}
	return s.Bytes(), nil
}

// effectLimits leave room around args that passed the default limits.
func effectLimits() Limits {
	return Limits{MaxBytes: MaxEffect, MaxDepth: DefaultMaxDepth + 1}
}

// validUTF8 reports whether every string field of e is UTF-8. Written as
// JSON, invalid bytes would become U+FFFD, giving two different effects
// one digest.
func (e Effect) validUTF8() bool {
	strs := []string{e.Tool, e.Task, e.Step, e.Principal.User, e.Principal.Agent, e.PolicyVersion, e.Audience}
	strs = append(strs, e.Principal.Delegations...)
	for _, r := range e.Refs {
		strs = append(strs, r.Name, r.Kind, r.Target, r.Unbound)
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// Digest returns the SHA-256 of e's canonical form. See [Seal].
func (e Effect) Digest() (Digest, error) {
	s, err := Seal(e)
	if err != nil {
		return Digest{}, err
	}
	return s.Digest(), nil
}

// ParseEffect decodes an effect from JSON, such as the effect object of a
// receipt, refusing unknown fields and anything [Canonicalize] refuses.
//
// The effect it returns has the canonical form of raw: encoding/json matches
// field names case-insensitively and fills in what is missing, so without
// that check a Go reader and any other reader of raw could see different
// effects.
func ParseEffect(raw []byte) (Effect, error) {
	given, err := effectLimits().Canonicalize(raw)
	if err != nil {
		return Effect{}, err
	}
	s, err := ParseSealed(given)
	if err != nil {
		return Effect{}, err
	}
	return s.Effect(), nil
}

package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/gateway"
)

// maxTokensFile bounds a tokens file.
const maxTokensFile = 1 << 20

// tokensSchema is the JSON Schema of a tokens file: every member spelled
// exactly, none unknown, each of its type.
//
//go:embed tokens.schema.json
var tokensSchema []byte

// tokensFile is the -tokens file: the runtimes the agent API admits, each
// by its token's SHA-256, never the token itself.
//
//	{"tokens": [{"sha256": "<64 hex>", "agent": "agent:reports", "users": ["user:dana"]}]}
type tokensFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

type tokenEntry struct {
	SHA256 string   `json:"sha256"`
	Agent  string   `json:"agent"`
	Users  []string `json:"users"`
}

// parseTokens reads the tokens file named file as strictly as a catalog
// (catalog.DecodeJSON): a member given twice at any level, spelled in
// another case, unknown or of the wrong type, data after the object, a
// byte order mark or an empty file is refused, and so is an agent or
// user that is not a principal id of its kind, or a hash given twice.
// Every refusal is "file:line:col: /pointer: problem".
func parseTokens(file string, b []byte) ([]gateway.RuntimeToken, error) {
	if len(b) > maxTokensFile {
		return nil, &catalog.Error{File: file, Problem: fmt.Sprintf("larger than %d bytes", maxTokensFile)}
	}
	var f tokensFile
	out := []gateway.RuntimeToken{}
	err := catalog.DecodeJSON(file, b, tokensSchema, &f, func() *catalog.Error {
		seen := map[[32]byte]int{}
		for i, e := range f.Tokens {
			at := func(field, problem string) *catalog.Error {
				return &catalog.Error{Pointer: "/tokens/" + strconv.Itoa(i) + field, Problem: problem}
			}
			h, err := hex.DecodeString(e.SHA256)
			if err != nil || len(h) != sha256.Size {
				return at("/sha256", "not 64 hex characters")
			}
			if [32]byte(h) == [32]byte{} {
				return at("/sha256", "all zeros: not the hash of a token")
			}
			if j, ok := seen[[32]byte(h)]; ok {
				return at("/sha256", fmt.Sprintf("the hash of /tokens/%d again: one token, one runtime", j))
			}
			seen[[32]byte(h)] = i
			if !principalOf(e.Agent, canon.PrefixAgent) {
				return at("/agent", `not an agent id ("agent:" and a lowercase name)`)
			}
			for j, u := range e.Users {
				if !principalOf(u, canon.PrefixUser) {
					return at("/users/"+strconv.Itoa(j), `not a user id ("user:" and a lowercase name)`)
				}
				if slices.Index(e.Users, u) < j {
					return at("/users/"+strconv.Itoa(j), "a user given twice")
				}
			}
			out = append(out, gateway.RuntimeToken{SHA256: [32]byte(h), Agent: e.Agent, Users: e.Users})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// principalOf reports whether id is a principal id of the kind prefix
// names.
func principalOf(id, prefix string) bool {
	return canon.CheckPrincipalID(id) == nil && strings.HasPrefix(id, prefix)
}

// runtimeTokens returns the tokens the agent API admits. Without a file,
// one fresh token for agent and user, printed now and good until exit.
// With a file that does not exist yet, the same, and its hash is written
// to the file, so the token keeps working across restarts and replicas.
// With an existing file, its tokens; none is printed, since the file
// holds only hashes. fresh is the new token, if one was made.
func runtimeTokens(file, agent, user string) (tokens []gateway.RuntimeToken, fresh string, err error) {
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			tokens, err := parseTokens(file, b)
			return tokens, "", err
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("-tokens: %w", err)
		}
	}
	fresh, err = gateway.NewRuntimeToken()
	if err != nil {
		return nil, "", err
	}
	h := gateway.HashRuntimeToken(fresh)
	tokens = []gateway.RuntimeToken{{SHA256: h, Agent: agent, Users: []string{user}}}
	if file == "" {
		return tokens, fresh, nil
	}
	b, err := json.MarshalIndent(tokensFile{Tokens: []tokenEntry{{SHA256: hex.EncodeToString(h[:]), Agent: agent,
		Users: []string{user}}}}, "", "  ")
	if err != nil {
		return nil, "", err
	}
	created, err := createOnce(file, func() ([]byte, error) { return append(b, '\n'), nil })
	if err != nil {
		return nil, "", fmt.Errorf("-tokens %s: %w", file, err)
	}
	if !created { // another replica wrote it first: use its tokens
		return runtimeTokens(file, agent, user)
	}
	return tokens, fresh, nil
}

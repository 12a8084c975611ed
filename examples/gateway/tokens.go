package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentstepup/asu/stepup/gateway"
)

// maxTokensFile bounds a tokens file.
const maxTokensFile = 1 << 20

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

// parseTokens reads a tokens file strictly: no unknown fields, nothing
// after the object, every hash 64 hex characters.
func parseTokens(b []byte) ([]gateway.RuntimeToken, error) {
	if len(b) > maxTokensFile {
		return nil, fmt.Errorf("tokens file: over %d bytes", maxTokensFile)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f tokensFile
	if err := dec.Decode(&f); err != nil {
		return nil, errors.New("tokens file: not a JSON object of the expected form")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("tokens file: data after the object")
	}
	if len(f.Tokens) == 0 {
		return nil, errors.New("tokens file: no tokens")
	}
	out := make([]gateway.RuntimeToken, 0, len(f.Tokens))
	for i, e := range f.Tokens {
		h, err := hex.DecodeString(e.SHA256)
		if err != nil || len(h) != 32 {
			return nil, fmt.Errorf("tokens file: entry %d: sha256 is not 64 hex characters", i+1)
		}
		out = append(out, gateway.RuntimeToken{SHA256: [32]byte(h), Agent: e.Agent, Users: e.Users})
	}
	return out, nil
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
			tokens, err := parseTokens(b)
			return tokens, "", err
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, "", err
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
		return nil, "", fmt.Errorf("tokens file: %w", err)
	}
	if !created { // another replica wrote it first: use its tokens
		return runtimeTokens(file, agent, user)
	}
	return tokens, fresh, nil
}

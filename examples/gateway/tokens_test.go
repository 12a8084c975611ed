package main

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// TestTokensSurviveRestarts: the first start with -tokens makes a token,
// prints it once and keeps only its hash, mode 0600; a restart prints no
// token, says where tokens are, and the old token still works.
func TestTokensSurviveRestarts(t *testing.T) {
	dir := t.TempDir()
	o := options{db: filepath.Join(dir, "asu.db"), tokens: filepath.Join(dir, "tokens.json"), user: "user:erin"}
	first := startGateway(t, o)
	token := first.Token
	require.NotEmpty(t, token)
	assert.Contains(t, first.printed(), "export ASU_TOKEN="+token)
	first.stop(t)

	b, err := os.ReadFile(o.tokens)
	require.NoError(t, err)
	assert.NotContains(t, string(b), token, "the file never holds a token")
	h := gateway.HashRuntimeToken(token)
	assert.Contains(t, string(b), hex.EncodeToString(h[:]))
	fi, err := os.Stat(o.tokens)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	second := startGateway(t, o)
	assert.Empty(t, second.Token)
	assert.NotContains(t, second.printed(), token)
	assert.Contains(t, second.printed(), "Runtime tokens are in "+o.tokens)
	assert.Equal(t, "user:erin", second.User, "the printed call names the file's user")
	c, err := remote.NewClient(second.AgentURL, token, nil)
	require.NoError(t, err)
	tk, err := c.Propose(context.Background(), withUser(readCall("q3.csv"), "user:erin"))
	require.NoError(t, err)
	assert.Equal(t, stepup.StatusAllowed, tk.Status)
}

// TestParseTokens: the tokens file is read strictly.
func TestParseTokens(t *testing.T) {
	h := strings.Repeat("ab", 32)
	good := `{"tokens":[{"sha256":"` + h + `","agent":"agent:reports","users":["user:dana"]}]}`
	tokens, err := parseTokens([]byte(good))
	require.NoError(t, err)
	require.Len(t, tokens, 1)
	assert.Equal(t, "agent:reports", tokens[0].Agent)
	for _, bad := range []string{
		``, `{}`, `{"tokens":[]}`, good + `{}`, good + `x`,
		strings.Replace(good, h, h[:62], 1),
		strings.Replace(good, h, "zz"+h[2:], 1),
		strings.Replace(good, `"agent"`, `"token":"x","agent"`, 1),
		`{"tokens":[{"sha256":"` + h + `","agent":"agent:reports","users":["user:dana"]}],"x":1}`,
	} {
		_, err := parseTokens([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// FuzzParseTokens: the tokens file reader never panics, and whatever it
// accepts has a 32-byte hash per entry.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"tokens":[{"sha256":"` + strings.Repeat("ab", 32) + `","agent":"agent:reports","users":["user:dana"]}]}`))
	f.Add([]byte(`{"tokens":null}`))
	f.Add([]byte(`{"tokens":[{"sha256":""}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tokens, err := parseTokens(b)
		if err != nil {
			return
		}
		for _, tk := range tokens {
			if tk.SHA256 == [32]byte{} && tk.Token == "" {
				continue // refused later by the agent API: no token at all
			}
			if tk.Token != "" {
				t.Fatal("a token in clear from the file")
			}
		}
	})
}

// TestKeyFiles: the gate key and the checkpoint key are created once,
// mode 0600, and read back the same, even by replicas starting at once;
// a key file others can read, or a short one, is refused.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gate.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, _, err := gateKey(file)
			assert.NoError(t, err)
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		assert.Len(t, k, minGateKey)
		assert.Equal(t, keys[0], k, "every replica reads the one key")
	}
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.NoError(t, os.Chmod(file, 0o640))
	_, _, err = gateKey(file)
	assert.ErrorContains(t, err, "readable by others")
	short := filepath.Join(dir, "short.key")
	require.NoError(t, os.WriteFile(short, []byte("0123456789"), 0o600))
	_, _, err = gateKey(short)
	assert.ErrorContains(t, err, "at least 32")

	cp := filepath.Join(dir, "checkpoint.pem")
	priv, pub, err := checkpointKey(cp)
	require.NoError(t, err)
	again, pub2, err := checkpointKey(cp)
	require.NoError(t, err)
	assert.Equal(t, priv, again)
	assert.Equal(t, pub, pub2)
	other := filepath.Join(dir, "other.pem")
	_, _, err = checkpointKey(other)
	require.NoError(t, err)
	require.NoError(t, os.Rename(other+".pub", cp+".pub"))
	_, _, err = checkpointKey(cp)
	assert.ErrorContains(t, err, "not the public half", "a public key file of another key is refused")
}

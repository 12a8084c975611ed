package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/catalog"
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

// TestParseTokens: a good tokens file reads as its runtimes; the hash may
// be in either case of hex.
func TestParseTokens(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, good := range []string{
		`{"tokens":[{"sha256":"` + h + `","agent":"agent:reports","users":["user:dana"]}]}`,
		`{"tokens":[{"sha256":"` + strings.ToUpper(h) + `","agent":"agent:reports","users":["user:dana"]}]}` + "\n\n",
		"{\n  \"tokens\": [\n    {\"users\": [\"user:dana\", \"user:erin\"], \"agent\": \"agent:reports\", \"sha256\": \"" + h + "\"}\n  ]\n}\n",
		`{"\u0074okens":[{"sha256":"` + h + `","agent":"agent:reports","users":["user:dana"]}]}`,
	} {
		tokens, err := parseTokens("tokens.json", []byte(good))
		require.NoError(t, err, good)
		require.Len(t, tokens, 1)
		assert.Equal(t, "agent:reports", tokens[0].Agent)
		assert.Equal(t, "user:dana", tokens[0].Users[0])
		assert.Equal(t, strings.Repeat("\xab", 32), string(tokens[0].SHA256[:]))
	}
}

// tokensDoc is a tokens file of two entries, one member a line, so that
// each member's line is known: "tokens" on line 2, the first entry's
// sha256, agent and users on lines 4 to 6, the second's on 9 to 11.
func tokensDoc(top, entry0 string) string {
	h0, h1 := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	if entry0 == "" {
		entry0 = `"sha256": "` + h0 + `",` + "\n" + `"agent": "agent:reports",` + "\n" + `"users": ["user:dana"]`
	}
	if top == "" {
		top = `"tokens"`
	}
	return "{\n" + top + ": [\n{\n" + entry0 + "\n},\n{\n" +
		`"sha256": "` + h1 + `",` + "\n" + `"agent": "agent:ops",` + "\n" + `"users": ["user:erin"]` + "\n}\n]\n}\n"
}

// spellings are the other-case spellings of a member name: all upper,
// capitalized, and each letter flipped on its own.
func spellings(name string) []string {
	out := []string{strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]}
	for i, c := range name {
		if 'a' <= c && c <= 'z' {
			out = append(out, name[:i]+strings.ToUpper(string(c))+name[i+1:])
		}
	}
	return out
}

// tokensRefusal is a broken tokens file and where its refusal must be.
type tokensRefusal struct {
	name, doc string
	line      int
	pointer   string
	problem   string
}

// tokensRefusals generates broken tokens files: every member name
// respelled, given twice, beside an unknown one, with values of every
// wrong type, and files broken as a whole.
func tokensRefusals() []tokensRefusal {
	h0 := strings.Repeat("ab", 32)
	entry := func(sha, agent, users string) string {
		return `"sha256": ` + sha + `,` + "\n" + `"agent": ` + agent + `,` + "\n" + `"users": ` + users
	}
	sha, agent, users := `"`+h0+`"`, `"agent:reports"`, `["user:dana"]`
	var out []tokensRefusal
	for _, sp := range spellings("tokens") {
		out = append(out, tokensRefusal{"top " + sp, tokensDoc(`"`+sp+`"`, ""), 2, "/" + sp, "unknown field"})
	}
	lineOf := map[string]int{"sha256": 4, "agent": 5, "users": 6}
	for _, field := range []string{"sha256", "agent", "users"} {
		for _, sp := range spellings(field) {
			e := strings.Replace(tokensDoc("", ""), `"`+field+`": `, `"`+sp+`": `, 1)
			out = append(out, tokensRefusal{field + " spelt " + sp, e, lineOf[field], "/tokens/0/" + sp, "unknown field"})
		}
		value := map[string]string{"sha256": sha, "agent": agent, "users": users}[field]
		escaped := `"\u00` + fmt.Sprintf("%x", field[0]) + field[1:] + `"`
		for _, twin := range []string{`"` + field + `"`, escaped} {
			out = append(out, tokensRefusal{field + " twice as " + twin,
				tokensDoc("", entry(sha, agent, users)+",\n"+twin+": "+value), 7, "/tokens/0/" + field, "given twice"})
		}
		wrongs := []string{`null`, `1`, `true`, `{}`, `[]`, `[1]`, `[null]`, `{"user": "user:dana"}`}
		if field == "users" {
			wrongs = append(wrongs, `"user:dana"`)
		}
		for _, wrong := range wrongs {
			e := map[string]string{"sha256": entry(wrong, agent, users), "agent": entry(sha, wrong, users), "users": entry(sha, agent, wrong)}[field]
			ptr := "/tokens/0/" + field
			if field == "users" && (wrong == `[1]` || wrong == `[null]`) {
				ptr += "/0"
			}
			if field == "users" && wrong == `[]` {
				out = append(out, tokensRefusal{"users empty", tokensDoc("", e), 6, ptr, "minItems"})
				continue
			}
			out = append(out, tokensRefusal{field + " as " + wrong, tokensDoc("", e), lineOf[field], ptr, "wrong type"})
		}
		missing := strings.Replace(tokensDoc("", ""), `"`+field+`": `, `"role": `, 1)
		out = append(out, tokensRefusal{"unknown member instead of " + field, missing, lineOf[field], "/tokens/0/role", "unknown field"})
	}
	out = append(out,
		tokensRefusal{"tokens twice", strings.Replace(tokensDoc("", ""), "\n]\n}\n", "\n],\n\"tokens\": []\n}\n", 1), 14, "/tokens", "given twice"},
		tokensRefusal{"unknown member at the top", strings.Replace(tokensDoc("", ""), "\n]\n}\n", "\n],\n\"admin\": true\n}\n", 1), 14, "/admin", "unknown field"},
		tokensRefusal{"no tokens", "{\n\"tokens\": []\n}", 2, "/tokens", "minItems"},
		tokensRefusal{"tokens an object", "{\n\"tokens\": {}\n}", 2, "/tokens", "wrong type"},
		tokensRefusal{"short hash", tokensDoc("", entry(`"`+h0[:62]+`"`, `"agent:reports"`, `["user:dana"]`)), 4, "/tokens/0/sha256", "pattern"},
		tokensRefusal{"hash not hex", tokensDoc("", entry(`"zz`+h0[2:]+`"`, `"agent:reports"`, `["user:dana"]`)), 4, "/tokens/0/sha256", "pattern"},
		tokensRefusal{"hash of zeros", tokensDoc("", entry(`"`+strings.Repeat("0", 64)+`"`, `"agent:reports"`, `["user:dana"]`)), 4, "/tokens/0/sha256", "all zeros"},
		tokensRefusal{"the same hash twice", tokensDoc("", entry(`"`+strings.Repeat("CD", 32)+`"`, `"agent:reports"`, `["user:dana"]`)), 9, "/tokens/1/sha256", "/tokens/0 again"},
		tokensRefusal{"agent a user", tokensDoc("", entry(`"`+h0+`"`, `"user:dana"`, `["user:dana"]`)), 5, "/tokens/0/agent", "not an agent id"},
		tokensRefusal{"agent in capitals", tokensDoc("", entry(`"`+h0+`"`, `"agent:Reports"`, `["user:dana"]`)), 5, "/tokens/0/agent", "not an agent id"},
		tokensRefusal{"agent empty", tokensDoc("", entry(`"`+h0+`"`, `""`, `["user:dana"]`)), 5, "/tokens/0/agent", "not an agent id"},
		tokensRefusal{"user an agent", tokensDoc("", entry(`"`+h0+`"`, `"agent:reports"`, `["user:dana", "agent:x"]`)), 6, "/tokens/0/users/1", "not a user id"},
		tokensRefusal{"user look-alike", tokensDoc("", entry(`"`+h0+`"`, `"agent:reports"`, `["user:dаna"]`)), 6, "/tokens/0/users/0", "not a user id"},
		tokensRefusal{"user twice", tokensDoc("", entry(`"`+h0+`"`, `"agent:reports"`, `["user:dana", "user:dana"]`)), 6, "/tokens/0/users/1", "given twice"},
		tokensRefusal{"data after the object", tokensDoc("", "") + "{}", 15, "", "data after"},
		tokensRefusal{"junk after the object", tokensDoc("", "") + "x", 15, "", "data after"},
		tokensRefusal{"cut short", strings.TrimSuffix(tokensDoc("", ""), "]\n}\n"), 13, "/tokens/1/users/0", "not JSON"},
		tokensRefusal{"byte order mark", "\ufeff" + tokensDoc("", ""), 1, "", "byte order mark"},
		tokensRefusal{"empty", "", 0, "", "empty"},
		tokensRefusal{"white space", " \n\t\n", 0, "", "empty"},
		tokensRefusal{"an array", "[]", 1, "", "wrong type"},
	)
	return out
}

// TestTokensFileRefusals: every broken tokens file is refused with
// "file:line:col: /pointer: problem", the line and pointer those of the
// member at fault.
func TestTokensFileRefusals(t *testing.T) {
	for _, tc := range tokensRefusals() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTokens("my-tokens.json", []byte(tc.doc))
			require.Error(t, err)
			var ce *catalog.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "my-tokens.json", ce.File)
			assert.Equal(t, tc.line, ce.Line, "%v", err)
			assert.Equal(t, tc.pointer, ce.Pointer, "%v", err)
			assert.Contains(t, ce.Problem, tc.problem, "%v", err)
			want := "my-tokens.json:"
			if tc.line > 0 {
				want = fmt.Sprintf("my-tokens.json:%d:%d: ", ce.Line, ce.Column)
				assert.Positive(t, ce.Column)
			}
			if tc.pointer != "" {
				want += tc.pointer + ": "
			}
			assert.True(t, strings.HasPrefix(err.Error(), want), "%v", err)
		})
	}
}

// TestTokensFileDuplicateAgent: read as encoding/json reads it, a
// duplicated agent is the last, so a runtime would act as an agent the
// operator did not see first; parseTokens refuses the file.
func TestTokensFileDuplicateAgent(t *testing.T) {
	file := `{"tokens":[{"sha256":"` + strings.Repeat("ab", 32) + `","agent":"agent:reports","users":["user:dana"],"agent":"agent:other"}]}`
	var naive tokensFile
	require.NoError(t, json.Unmarshal([]byte(file), &naive))
	assert.Equal(t, "agent:other", naive.Tokens[0].Agent, "the naive reading takes the later agent")
	_, err := parseTokens("tokens.json", []byte(file))
	assert.ErrorContains(t, err, `tokens.json:1:`)
	assert.ErrorContains(t, err, `/tokens/0/agent: key "agent" given twice`)
}

// TestTokensFileRefusedAtStart: the gateway does not start on a broken
// tokens file, and says which file, line and field.
func TestTokensFileRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(tokensDoc("", ""), `"agent"`, `"Agent"`, 1)), 0o600))
	o := options{db: filepath.Join(dir, "asu.db"), tokens: file, agentAddr: "127.0.0.1:0", siteAddr: "127.0.0.1:0", log: &bytes.Buffer{}}
	err := run(t.Context(), &bytes.Buffer{}, o, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), file+":5:")
	assert.Contains(t, err.Error(), `/tokens/0/Agent: unknown field "Agent"`)
}

// FuzzParseTokens: the tokens file reader never panics; whatever it
// accepts has a nonzero hash and no token in clear per entry, and a
// refusal names the file.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"tokens":[{"sha256":"` + strings.Repeat("ab", 32) + `","agent":"agent:reports","users":["user:dana"]}]}`))
	f.Add([]byte(`{"tokens":null}`))
	f.Add([]byte(`{"tokens":[{"sha256":""}]}`))
	f.Add([]byte(tokensDoc("", "")))
	f.Fuzz(func(t *testing.T, b []byte) {
		tokens, err := parseTokens("f.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("a refusal that does not name the file: %v", err)
			}
			return
		}
		for _, tk := range tokens {
			if tk.SHA256 == [32]byte{} || tk.Token != "" {
				t.Fatal("an entry without a hash, or with a token in clear")
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

package canon_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// TestEffectGolden pins the wire form of an effect: field names, their
// order, and the digest third parties recompute from a receipt.
func TestEffectGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/effect/send_email.json")
	require.NoError(t, err)
	wantDigest, err := os.ReadFile("testdata/effect/send_email.sha256")
	require.NoError(t, err)

	got, err := sampleEffect().Canonical()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(string(want), "\n"), string(got))
	d, err := sampleEffect().Digest()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(wantDigest)), d.String())
	assert.Equal(t, canon.Sum(got), d)
}

// stringFields sets each string an effect carries, by name.
var stringFields = map[string]func(e *canon.Effect, s string){
	"tool":                  func(e *canon.Effect, s string) { e.Tool = s },
	"task":                  func(e *canon.Effect, s string) { e.Task = s },
	"step":                  func(e *canon.Effect, s string) { e.Step = s },
	"principal.user":        func(e *canon.Effect, s string) { e.Principal.User = s },
	"principal.agent":       func(e *canon.Effect, s string) { e.Principal.Agent = s },
	"principal.delegations": func(e *canon.Effect, s string) { e.Principal.Delegations = []string{s} },
	"policy_version":        func(e *canon.Effect, s string) { e.PolicyVersion = s },
	"audience":              func(e *canon.Effect, s string) { e.Audience = s },
	"refs[].name":           func(e *canon.Effect, s string) { e.Refs[0].Name = s },
	"refs[].kind":           func(e *canon.Effect, s string) { e.Refs[0].Kind = s },
	"refs[].unbound":        func(e *canon.Effect, s string) { e.Refs[0].Unbound = s },
}

// TestEffectRefusesInvalidUTF8InFields: a Go string field holding bytes that
// are not UTF-8 would be hashed as U+FFFD by a naive json.Marshal, so
// "send\xff" and "send\uFFFD" would share a digest while the executor runs the
// former. Such an effect is refused, never hashed.
func TestEffectRefusesInvalidUTF8InFields(t *testing.T) {
	// The attack against the naive form: two different strings, one JSON text.
	a, err := json.Marshal("send\xff")
	require.NoError(t, err)
	b, err := json.Marshal("send\uFFFD")
	require.NoError(t, err)
	ca, err := canon.Canonicalize(a)
	require.NoError(t, err)
	cb, err := canon.Canonicalize(b)
	require.NoError(t, err)
	require.Equal(t, ca, cb, "encoding/json no longer coerces invalid UTF-8; revisit this test")

	var paths []string
	jsonPaths(&paths, "", jsonShapeOf(t, sampleEffect()))
	for _, p := range paths {
		if p == "refs[].sha256" || p == "args" || p == "refs" || p == "refs[].size" {
			continue
		}
		assert.Contains(t, stringFields, p, "string field %s is not checked", p)
	}

	for name, set := range stringFields {
		t.Run(name, func(t *testing.T) {
			bad := sampleEffect()
			set(&bad, "x\xff")
			_, err := bad.Digest()
			require.ErrorIs(t, err, canon.ErrInvalidUTF8)
			assert.NotContains(t, err.Error(), "x\xff")

			good := sampleEffect()
			set(&good, "x\uFFFD")
			_, err = good.Digest()
			assert.NoError(t, err)
		})
	}
}

// TestEffectStringsAreExact: strings that encoding/json would escape for
// HTML or JavaScript reach the canonical form as the characters they are.
func TestEffectStringsAreExact(t *testing.T) {
	e := sampleEffect()
	e.Tool = "a<b>&\u2028\u2029"
	c, err := e.Canonical()
	require.NoError(t, err)
	assert.Contains(t, string(c), `"tool":"a<b>&`+"\u2028\u2029"+`"`)
}

func TestParseEffectRoundTrip(t *testing.T) {
	for seed := range uint64(50) {
		g := newGen(seed)
		e := sampleEffect()
		e.Args = g.object(3, 4).noisy(g.r)
		e.Task = g.str(10)
		e.Principal.Delegations = []string{g.str(5), g.str(5)}
		want, err := e.Canonical()
		require.NoError(t, err)

		parsed, err := canon.ParseEffect(want)
		require.NoError(t, err, "seed %d", seed)
		got, err := parsed.Canonical()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "seed %d", seed)
	}
}

// TestParseEffectRefusesAmbiguity: ParseEffect accepts only JSON whose
// canonical form is the canonical form of the effect it returns, so what a
// receipt's bytes say and what the parsed effect says cannot differ.
func TestParseEffectRefusesAmbiguity(t *testing.T) {
	canonical, err := sampleEffect().Canonical()
	require.NoError(t, err)
	full := string(canonical)
	replace := func(old, new string) string {
		require.Contains(t, full, old)
		return strings.Replace(full, old, new, 1)
	}
	cases := map[string]string{
		// encoding/json matches field names case-insensitively: "TOOL"
		// would become the tool a Go reader sees, while any other reader
		// sees "tool".
		"case variant key":     replace(`"tool":"send_email"`, `"tool":"send_email","TOOL":"delete_all"`),
		"case variant only":    replace(`"tool":"send_email"`, `"Tool":"send_email"`),
		"unknown field":        replace(`"task":`, `"extra":1,"task":`),
		"missing field":        replace(`"audience":"mail-executor",`, ``),
		"null list":            replace(`"delegations":["ops-team"]`, `"delegations":null`),
		"null refs":            replace(`"refs":[{`, `"refs":null,"x":[{`),
		"args not an object":   replace(`"args":{"attachment":"q3.csv","subject":"Q3 numbers","to":"finance@example.com"}`, `"args":[1]`),
		"duplicate key":        replace(`"task":"task-7"`, `"task":"task-7","task":"task-9"`),
		"trailing data":        full + "{}",
		"not an object":        `[]`,
		"wrong type":           replace(`"size":15`, `"size":"15"`),
		"fraction in size":     replace(`"size":15`, `"size":15.5`),
		"bad digest":           replace(`"sha256":"50f7`, `"sha256":"zzf7`),
		"uppercase digest hex": replace(`"sha256":"50f739205e4a07e3918eaf4e276e090c016bb14be6b41d591150c6181b91b492"`, `"sha256":"50F739205E4A07E3918EAF4E276E090C016BB14BE6B41D591150C6181B91B492"`),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := canon.ParseEffect([]byte(in))
			assert.Error(t, err)
		})
	}
	// Spelling differences alone are fine.
	noisy := strings.ReplaceAll(full, `,"`, ", \n\"")
	noisy = strings.Replace(noisy, `"send_email"`, `"send\u005femail"`, 1)
	e, err := canon.ParseEffect([]byte(noisy))
	require.NoError(t, err)
	assert.Equal(t, "send_email", e.Tool)
}

// Args that pass Canonicalize on their own also pass inside the effect: the
// effect's frame adds one level and the marshalled escapes of "<", ">" and
// "&" do not count against the size limit.
func TestEffectLimitsFrameArgs(t *testing.T) {
	deep := strings.Repeat(`{"a":`, canon.DefaultMaxDepth) + "1" + strings.Repeat("}", canon.DefaultMaxDepth)
	_, err := canon.Canonicalize([]byte(deep))
	require.NoError(t, err)
	_, err = canon.Effect{Tool: "t", Args: json.RawMessage(deep)}.Digest()
	assert.NoError(t, err, "64 levels of args")

	angles := `{"a":"` + strings.Repeat("<", 400<<10) + `"}`
	_, err = canon.Effect{Tool: "t", Args: json.RawMessage(angles)}.Digest()
	assert.NoError(t, err, "400 KiB of '<'")
}

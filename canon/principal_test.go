package canon_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/canon"
)

const nameChars = "abcdefghijklmnopqrstuvwxyz0123456789._@+-"

var kinds = []string{"user", "agent", "group", "policy", "grant"}

// validID generates an id of the documented syntax.
func validID(r *rand.Rand) string {
	n := 1 + r.IntN(24)
	if r.IntN(20) == 0 {
		n = canon.MaxPrincipalName
	}
	b := []byte(kinds[r.IntN(len(kinds))] + ":")
	b = append(b, nameChars[r.IntN(36)])
	for range n - 1 {
		b = append(b, nameChars[r.IntN(len(nameChars))])
	}
	return string(b)
}

// lookAlikes maps ASCII characters of ids to characters a person reads as
// them: Cyrillic, Greek, fullwidth, dotless i, small capitals,
// mathematical letters, and NFKC-equivalent forms.
var lookAlikes = map[byte][]rune{
	'a': {'а', 'ɑ', 'α', 'ａ', '𝐚', 'ᴀ'}, 'c': {'с', 'ϲ', 'ｃ'}, 'e': {'е', 'е', 'ｅ', 'ℯ'},
	'i': {'і', 'ı', 'ｉ', 'ⅰ', 'ɩ'}, 'o': {'о', 'ο', 'ｏ', '૦', 'ᴏ'}, 'p': {'р', 'ρ', 'ｐ'},
	'r': {'г', 'ｒ', 'ʀ'}, 's': {'ѕ', 'ｓ'}, 'u': {'υ', 'ս', 'ｕ', 'ᴜ'}, 'x': {'х', 'ｘ'},
	'y': {'у', 'ｙ'}, 'g': {'ɡ', 'ｇ'}, 'n': {'ո', 'ｎ'}, 't': {'т', 'ｔ'},
	'0': {'０', 'O', 'о'}, '1': {'１', '①', 'I'}, '2': {'²', '２'}, ':': {'：', '꞉', '∶'},
	'.': {'․', '．'}, '-': {'‐', '‑', '–', '−'}, '@': {'＠'}, '+': {'＋'}, '_': {'＿'},
	'l': {'ӏ', 'ｌ', 'ℓ', 'I'}, 'd': {'ԁ', 'ｄ'}, 'm': {'ｍ', 'ⅿ'},
}

var invisibles = []rune{'\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u034f', '\u0301'}
var spaces = []rune{' ', '\t', '\n', '\r', '\u00a0', '\u2000', '\u3000', '\u202f'}

// spoof returns a different spelling of id that a person, a case-folding
// comparison or NFKC could take for it.
func spoof(id string, r *rand.Rand) string {
	for {
		var out string
		switch r.IntN(7) {
		case 0, 1: // look-alike of one character
			i := r.IntN(len(id))
			alts := lookAlikes[id[i]]
			if len(alts) == 0 {
				continue
			}
			out = id[:i] + string(alts[r.IntN(len(alts))]) + id[i+1:]
		case 2: // one letter upper-cased, or the whole id
			if r.IntN(3) == 0 {
				out = strings.ToUpper(id)
			} else {
				i := r.IntN(len(id))
				out = id[:i] + strings.ToUpper(id[i:i+1]) + id[i+1:]
			}
		case 3: // an invisible character anywhere
			i := r.IntN(len(id) + 1)
			out = id[:i] + string(invisibles[r.IntN(len(invisibles))]) + id[i:]
		case 4: // white space at either end or inside
			sp := string(spaces[r.IntN(len(spaces))])
			switch r.IntN(3) {
			case 0:
				out = sp + id
			case 1:
				out = id + sp
			default:
				i := strings.IndexByte(id, ':') + 1
				out = id[:i] + sp + id[i:]
			}
		case 5: // a name starting with punctuation, or empty, or too long
			kind, name, _ := strings.Cut(id, ":")
			switch r.IntN(3) {
			case 0:
				out = kind + ":" + string("._@+-"[r.IntN(5)]) + name
			case 1:
				out = kind + ":"
			default:
				out = kind + ":" + strings.Repeat("a", canon.MaxPrincipalName+1)
			}
		case 6: // another kind, or the kind without its colon
			_, name, _ := strings.Cut(id, ":")
			out = []string{"users:", "User:", "admin:", "root:", "agent", "user::", ":", "usеr:"}[r.IntN(8)] + name
		}
		if out != id {
			return out
		}
	}
}

// TestPrincipalIDSyntax: every generated id of the documented syntax is
// accepted, and every spoofed spelling of one is refused.
func TestPrincipalIDSyntax(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 5000 {
		id := validID(r)
		require.NoError(t, canon.CheckPrincipalID(id), "%q", id)
		bad := spoof(id, r)
		err := canon.CheckPrincipalID(bad)
		require.ErrorIs(t, err, canon.ErrPrincipal, "%+q accepted (spoof of %q)", bad, id)
		if utf8.ValidString(bad) && bad != "" {
			assert.NotContains(t, err.Error(), bad, "the error does not quote the id")
		}
	}
	for _, bad := range []string{"", "user", "dana", "user:dana\x00", "user:d\xffna", "user:da/na",
		"user:dana%40x", "user:dana#1", "user:dana!", "user:da na", "user:dana\u2028", "agent:a\u0000", "user:👤"} {
		assert.ErrorIs(t, canon.CheckPrincipalID(bad), canon.ErrPrincipal, "%+q", bad)
	}
}

// TestPrincipalIDNaiveCheckIsFooled shows what the spoof generator finds
// against a check that folds case and normalizes before looking at the
// prefix: most spoofs pass it, so the strict syntax is what refuses them.
func TestPrincipalIDNaiveCheckIsFooled(t *testing.T) {
	fold := cases.Fold()
	naive := func(s string) bool {
		s = strings.TrimSpace(norm.NFKC.String(fold.String(s)))
		kind, name, ok := strings.Cut(s, ":")
		return ok && name != "" && (kind == "user" || kind == "agent" || kind == "group")
	}
	r := rand.New(rand.NewPCG(3, 4))
	fooled := 0
	const n = 2000
	for range n {
		id := validID(r)
		for strings.HasPrefix(id, canon.PrefixPolicy) || strings.HasPrefix(id, canon.PrefixGrant) {
			id = validID(r)
		}
		bad := spoof(id, r)
		if naive(bad) {
			fooled++
		}
		require.Error(t, canon.CheckPrincipalID(bad))
	}
	assert.Greater(t, fooled, n/3, "the naive check accepts many spoofs")
}

func TestReserved(t *testing.T) {
	for _, id := range []string{"policy:catalog-v3", "grant:g-17", "policy:", "grant:X", "model:gpt-judge", "model:"} {
		assert.True(t, canon.Reserved(id), id)
	}
	for _, id := range []string{"user:policy", "agent:grant", "group:policy-admins", "Policy:x", "рolicy:x", "grants:x"} {
		assert.False(t, canon.Reserved(id), id)
	}
}

func TestPrincipalCheck(t *testing.T) {
	good := canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{"group:finance", "agent:sub"}}
	require.NoError(t, good.Check())
	require.NoError(t, canon.Principal{User: "user:dana", Agent: "agent:reports"}.Check())

	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		p := good
		p.Delegations = append([]string(nil), good.Delegations...)
		switch r.IntN(5) {
		case 0:
			p.User = spoof(p.User, r)
		case 1:
			p.Agent = spoof(p.Agent, r)
		case 2:
			p.Delegations[r.IntN(2)] = spoof(p.Delegations[0], r)
		case 3: // the right syntax, the wrong kind
			p.User, p.Agent = p.Agent, p.User
		case 4: // a reserved kind smuggled in
			p.Delegations[r.IntN(2)] = []string{"policy:v1", "grant:g1", "model:m1"}[r.IntN(3)]
		}
		assert.ErrorIs(t, p.Check(), canon.ErrPrincipal, "%+v", p)
	}
	assert.ErrorIs(t, canon.Principal{User: "group:finance", Agent: "agent:a"}.Check(), canon.ErrPrincipal)
	assert.ErrorIs(t, canon.Principal{User: "user:dana", Agent: "user:dana"}.Check(), canon.ErrPrincipal)
	assert.ErrorIs(t, canon.Principal{User: "user:dana"}.Check(), canon.ErrPrincipal, "an agent is required")
}

func ExampleCheckPrincipalID() {
	for _, id := range []string{"user:dana", "agent:reports-bot", "Agent:reports", "аgent:reports", "user:dana\u200b"} {
		fmt.Println(canon.CheckPrincipalID(id) == nil)
	}
	fmt.Println(canon.Reserved("grant:g-17"))
	// Output:
	// true
	// true
	// false
	// false
	// false
	// true
}

func ExamplePrincipal_Check() {
	p := canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{"group:finance"}}
	fmt.Println(p.Check())
	p.Delegations = append(p.Delegations, "policy:v1")
	fmt.Println(p.Check())
	// Output:
	// <nil>
	// delegation 1: canon: invalid principal id: reserved kind
}

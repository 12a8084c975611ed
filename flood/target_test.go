package flood_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/idna"

	"github.com/agentstepup/asu/flood"
)

func TestEmailTarget(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"payout@attacker.example", "domain:attacker.example"},
		{"Payout+1@Attacker.Example.", "domain:attacker.example"},
		{"other@a.b.attacker.example", "domain:attacker.example"},
		{"p@ＡＴＴＡＣＫＥＲ．example", "domain:attacker.example"},
		{"Bob <b@bücher.de>", "domain:xn--bcher-kva.de"},
		{"b@XN--BCHER-KVA.de", "domain:xn--bcher-kva.de"},
		{"p@аttacker.example", "domain:xn--ttacker-1fg.example"}, // a Cyrillic look-alike is another target
		{"a@[127.0.0.1]", "ip:127.0.0.1"},
		{"a@[IPv6:::ffff:127.0.0.1]", "ip:127.0.0.1"},
		{"a@co.uk", "domain:co.uk"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := flood.EmailTarget(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestTargetInvalid(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) (flood.Target, error)
		in   string
	}{
		{"email without at", flood.EmailTarget, "attacker.example"},
		{"email without host", flood.EmailTarget, "a@"},
		{"email with empty label", flood.EmailTarget, "a@x..example"},
		{"email too long", flood.EmailTarget, "a@" + strings.Repeat("a", flood.MaxTargetLen)},
		{"email not UTF-8", flood.EmailTarget, "a@\xff.example"},
		{"bad ip literal", flood.EmailTarget, "a@[1.2.3]"},
		{"domain empty", flood.DomainTarget, ""},
		{"url without host", flood.DomainTarget, "https:///path"},
		{"repository without owner", flood.RepositoryTarget, "github.com/owner"},
		{"repository with dot-dot", flood.RepositoryTarget, "github.com/owner/../x"},
		{"repository without path", flood.RepositoryTarget, "github.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f(tt.in)
			require.ErrorIs(t, err, flood.ErrInvalidTarget)
			assert.True(t, got.IsZero())
		})
	}
}

func TestDomainAndRepositoryTarget(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) (flood.Target, error)
		in   []string
		want string
	}{
		{"domain", flood.DomainTarget, []string{"attacker.example", "WWW.Attacker.Example.", "https://x.attacker.example:8443/pay?a=1", "ａｔｔａｃｋｅｒ.example"}, "domain:attacker.example"},
		{"ip", flood.DomainTarget, []string{"10.0.0.1", "https://10.0.0.1/x", "[::ffff:10.0.0.1]"}, "ip:10.0.0.1"},
		{"repository", flood.RepositoryTarget, []string{"github.com/Owner/Repo", "https://GitHub.com/owner/repo.git", "git@github.com:OWNER/repo.git", "github.com/owner/repo/", "ssh://git@github.com/owner/Repo"}, "repo:github.com/owner/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, in := range tt.in {
				got, err := tt.f(in)
				require.NoError(t, err, in)
				assert.Equal(t, tt.want, got.String(), in)
			}
		})
	}
}

func TestNamedTarget(t *testing.T) {
	assert.True(t, flood.NamedTarget("iban", "").IsZero())
	// The kind and id are taken injectively: ("a:b", "c") is not ("a", "b:c").
	assert.NotEqual(t, flood.NamedTarget("a:b", "c"), flood.NamedTarget("a", "b:c"))
	assert.Equal(t, flood.NamedTarget("iban", "DE1"), flood.NamedTarget("iban", "DE1"))
}

// spellTarget writes the mailbox domain dom in one of many spellings an
// attacker might use to make requests look unrelated: another local part,
// plus-addressing, letter case, a trailing dot, a subdomain, full-width
// characters, a display name.
func spellTarget(rng *rand.Rand, dom string) string {
	local := []string{"payout", "billing", "ap", "finance.team"}[rng.IntN(4)]
	if rng.IntN(2) == 0 {
		local += "+" + strings.Repeat("x", 1+rng.IntN(5))
	}
	host := dom
	if rng.IntN(3) == 0 {
		host = []string{"mail.", "pay.", "eu.billing."}[rng.IntN(3)] + host
	}
	var b strings.Builder
	for _, r := range host {
		switch rng.IntN(4) {
		case 0:
			b.WriteString(strings.ToUpper(string(r)))
		case 1:
			if r >= 'a' && r <= 'z' {
				b.WriteRune(r - 'a' + 'ａ') // full-width, which lookup maps back
				continue
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	host = b.String()
	if rng.IntN(4) == 0 {
		// The A-label form, as mail software may write an IDN.
		if a, err := idna.Lookup.ToASCII(strings.ToLower(host)); err == nil {
			host = strings.ToUpper(a[:1]) + a[1:]
		}
	}
	if rng.IntN(2) == 0 {
		host += "."
	}
	addr := local + "@" + host
	if rng.IntN(3) == 0 {
		addr = "Accounts Payable <" + addr + ">"
	}
	return addr
}

// TestTargetSpellingsFold: whatever the spelling, mail to one domain is
// one target, so a disguised flood meets one counter.
func TestTargetSpellingsFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	for _, dom := range []string{"attacker.example", "bücher.de", "evil.co.uk"} {
		want, err := flood.EmailTarget("a@" + dom)
		require.NoError(t, err)
		for range 500 {
			s := spellTarget(rng, dom)
			got, err := flood.EmailTarget(s)
			require.NoError(t, err, s)
			require.Equal(t, want, got, s)
		}
	}
}

func FuzzTarget(f *testing.F) {
	for _, s := range []string{"a@b.example", "Bob <B@X.example.>", "a@[::1]", "https://h.example/x", "git@github.com:o/r.git", "a@\u3002", "@", "a@.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fn := range []func(string) (flood.Target, error){flood.EmailTarget, flood.DomainTarget, flood.RepositoryTarget} {
			got, err := fn(s)
			if err != nil {
				require.ErrorIs(t, err, flood.ErrInvalidTarget)
				require.True(t, got.IsZero())
				continue
			}
			require.False(t, got.IsZero())
			// A key is a fixed point: its own domain reads back as itself.
			if d, ok := strings.CutPrefix(got.String(), "domain:"); ok {
				again, err := flood.DomainTarget(d)
				require.NoError(t, err, d)
				require.Equal(t, got, again)
			}
		}
	})
}

// TestNumericHostsAreAddresses: every spelling of an IPv4 address a
// browser reads as that address (WHATWG URL: 127.1, octal, hexadecimal,
// one number, a trailing dot, full-width digits) is the address's one
// target, and a numeric host that is no address is no target.
func TestNumericHostsAreAddresses(t *testing.T) {
	want, err := flood.DomainTarget("127.0.0.1")
	require.NoError(t, err)
	for _, s := range []string{"127.1", "127.0.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433", "0x7f000001",
		"127.0.0.1.", "１２７.０.０.１", "127。0。0。1", "https://127.1/x"} {
		got, err := flood.DomainTarget(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"256.0.0.1", "1.2.3.4.5", "example.123", "0x1g.0.0.1", "4294967296"} {
		_, err := flood.DomainTarget(s)
		assert.ErrorIs(t, err, flood.ErrInvalidTarget, s)
	}
	zero, err := flood.DomainTarget("0.0.0.0.")
	require.NoError(t, err)
	again, err := flood.DomainTarget("0.0.0.0")
	require.NoError(t, err)
	assert.Equal(t, again, zero, "a trailing dot changes nothing")
}

// TestTargetsReadBackAsThemselves: whatever a host is made of (percent
// escapes of any byte, invalid UTF-8, U+FFFD, labels that look like
// A-labels, letters of other scripts), a target accepted from it names a
// domain that reads back as the same target: no host is keyed by a label
// the converter made of bytes it could not read.
func TestTargetsReadBackAsThemselves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 27))
	pieces := []func() string{
		func() string { return fmt.Sprintf("%%%02X", rng.IntN(256)) },
		func() string { return string([]byte{byte(0x80 + rng.IntN(0x80))}) },
		func() string { return "\uFFFD" },
		func() string { return "xn--" + fmt.Sprint(rng.IntN(1000)) + "-" + string(rune('a'+rng.IntN(26))) },
		func() string { return string([]rune("aé0-ßдא中")[rng.IntN(8)]) },
		func() string { return "." },
		func() string { return "example" },
	}
	for range 20_000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))]())
		}
		host := b.String()
		for _, s := range []string{host, "https://" + host + "/x", "A://" + host, "x@" + host} {
			for _, fn := range []func(string) (flood.Target, error){flood.DomainTarget, flood.EmailTarget} {
				got, err := fn(s)
				if err != nil {
					require.ErrorIs(t, err, flood.ErrInvalidTarget)
					continue
				}
				if d, ok := strings.CutPrefix(got.String(), "domain:"); ok {
					again, err := flood.DomainTarget(d)
					require.NoError(t, err, "%q gave %s", s, d)
					require.Equal(t, got, again, s)
				}
			}
		}
	}
}

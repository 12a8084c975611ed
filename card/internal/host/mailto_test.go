package host

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMailto(t *testing.T) {
	cases := []struct {
		in    string
		hosts []string
		texts []string
		whole bool
	}{
		{"a@example.com", []string{"example.com"}, nil, true},
		{"a@example.com?subject=Q3&body=hi", []string{"example.com"}, nil, true},
		{"a@example.com?bcc=x%40evil.net", []string{"example.com", "evil.net"}, nil, true},
		{"a@example.com?%62%63%63=x%40evil%2Enet", []string{"example.com", "evil.net"}, nil, true},
		{"a@example.com?CC=b@example.com,%20c%40evil.net", []string{"example.com", "evil.net"}, nil, true},
		{"a@example.com,b%40evil.net", []string{"example.com", "evil.net"}, nil, true},
		{"?to=a%40example.com", []string{"example.com"}, nil, true},
		{"a@example.com?to=Dana%20%3Cd%40evil.net%3E", []string{"example.com", "evil.net"}, nil, true},
		{"a@example.com?reply-to=x%40evil.net", []string{"example.com"}, []string{"x@evil.net"}, true},
		{"a@example.com?%20Bcc%20=x%40evil.net", []string{"example.com", "evil.net"}, nil, true},
		{"a@example.com?x%40evil.net=1", []string{"example.com"}, []string{"x@evil.net"}, true},
		{"a@example.com?cc=undisclosed:x%40evil.net;", []string{"example.com"}, []string{"undisclosed:x@evil.net;"}, false},
		{"a@example.com?subject=%zz", []string{"example.com"}, nil, false},
		{"a@example.com?cc=%FF%40evil.net", []string{"example.com", "evil.net"}, nil, false},
		{"", nil, nil, false},
		{"?subject=hi", nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			m := parseMailto(tc.in)
			assert.Equal(t, tc.hosts, m.hosts)
			assert.Equal(t, tc.texts, m.texts)
			assert.Equal(t, tc.whole, m.whole)
		})
	}
}

// mailtoGen builds mailto: URIs with a known set of recipients, spelled
// every way RFC 6068 allows: in the path or in to, cc and bcc fields (any
// case), comma-separated, field names and values percent-encoded in part
// or in whole, beside fields that carry no address.
type mailtoGen struct{ rng *rand.Rand }

// encode percent-encodes a random part of s (all of it, its @ and dots,
// or nothing).
func (g mailtoGen) encode(s string) string {
	switch g.rng.IntN(4) {
	case 0:
		return s
	case 1:
		return strings.ReplaceAll(s, "@", "%40")
	case 2:
		return strings.NewReplacer("@", "%40", ".", "%2e").Replace(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// fieldName is to, cc or bcc in a random case, maybe percent-encoded.
func (g mailtoGen) fieldName() string {
	name := []byte([]string{"to", "cc", "bcc"}[g.rng.IntN(3)])
	for i := range name {
		if g.rng.IntN(2) == 0 {
			name[i] -= 'a' - 'A'
		}
	}
	if g.rng.IntN(3) == 0 {
		return g.encode(string(name))
	}
	return string(name)
}

// uri returns a mailto: URI whose recipients are the given addresses.
func (g mailtoGen) uri(addrs []string) string {
	var path []string
	var fields []string
	for _, a := range addrs {
		if len(path) == 0 && g.rng.IntN(2) == 0 || g.rng.IntN(4) == 0 {
			path = append(path, g.encode(a))
			continue
		}
		// Join to the last recipient field sometimes: "cc=a,b".
		if n := len(fields); n > 0 && g.rng.IntN(3) == 0 && !strings.HasPrefix(fields[n-1], "subject") {
			fields[n-1] += "," + g.encode(a)
			continue
		}
		fields = append(fields, g.fieldName()+"="+g.encode(a))
	}
	for range g.rng.IntN(3) {
		f := []string{"subject=Q3%20report", "body=see%20attached", "Subject=hi"}[g.rng.IntN(3)]
		k := g.rng.IntN(len(fields) + 1)
		fields = append(fields[:k], append([]string{f}, fields[k:]...)...)
	}
	scheme := []string{"mailto", "MAILTO", "MailTo"}[g.rng.IntN(3)]
	u := scheme + ":" + strings.Join(path, ",")
	if len(fields) > 0 {
		u += "?" + strings.Join(fields, "&")
	}
	return u
}

var mailtoHosts = []string{"example.com", "mail.example.com", "evil.net", "example.com.evil.net", "corp.example.org"}

// TestMailtoEveryRecipientListed: whatever the spelling, every
// recipient's host is listed, and the value is trusted only when every
// recipient is at the one trusted host. A reader of the path alone (the
// card before RFC 6068 was read) misses a recipient in most of the same
// values, so the test can tell them apart.
func TestMailtoEveryRecipientListed(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	g := mailtoGen{rand.New(rand.NewPCG(7, 11))}
	naiveMissed := 0
	const n = 3000
	for i := range n {
		var addrs []string
		want := map[string]bool{}
		for k := range 1 + g.rng.IntN(4) {
			h := mailtoHosts[g.rng.IntN(len(mailtoHosts))]
			if i%3 == 0 {
				h = "example.com" // many values at the trusted host alone
			}
			addrs = append(addrs, fmt.Sprintf("u%d@%s", k, h))
			want[h] = true
		}
		v := g.uri(addrs)
		doms, notOne, err := NewAnalyzer(trusted).Hosts(v, false)
		require.NoError(t, err, v)
		got := map[string]bool{}
		trustedBadge := false
		for _, d := range doms {
			got[d.ASCII] = true
			trustedBadge = trustedBadge || d.Trusted
		}
		for h := range want {
			require.True(t, got[h], "%s: %s not listed in %v", v, h, doms)
		}
		onlyTrusted := len(want) == 1 && (want["example.com"] || want["mail.example.com"])
		require.Equal(t, onlyTrusted, trustedBadge, v)
		require.Equal(t, len(want) > 1, notOne, v)

		// The naive reader: the path's first address.
		naive := map[string]bool{}
		if t, ok := parseURL(v); ok {
			naive[t.host] = true
		}
		for h := range want {
			if !naive[h] {
				naiveMissed++
				break
			}
		}
	}
	assert.Greater(t, naiveMissed, n/2, "the naive reader should miss a recipient in most values")
}

// TestMailtoOtherFieldsNeverTrusted: a host named in any header field
// other than to, cc and bcc, however its name and value are encoded, is
// listed and keeps the value from being trusted.
func TestMailtoOtherFieldsNeverTrusted(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	g := mailtoGen{rand.New(rand.NewPCG(3, 5))}
	for range 500 {
		name := []string{"reply-to", "From", "resent-to", "x-cc", "body", "subject", "x@evil.net"}[g.rng.IntN(7)]
		v := "mailto:finance@example.com?" + g.encode(name) + "=" + g.encode("x@evil.net")
		doms, notOne, err := NewAnalyzer(trusted).Hosts(v, false)
		require.NoError(t, err, v)
		assert.True(t, notOne, v)
		listed := false
		for _, d := range doms {
			assert.False(t, d.Trusted, v)
			listed = listed || d.ASCII == "evil.net"
		}
		assert.True(t, listed, "%s: evil.net not listed in %v", v, doms)
	}
}

// TestTrustedOnlyForSchemesThatSend: a URL with a trusted host is trusted
// only when its scheme sends something to the host; any other scheme's
// host is listed with a warning saying why.
func TestTrustedOnlyForSchemesThatSend(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	sending := map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}
	schemes := []string{"http", "https", "ws", "wss", "ftp", "javascript", "vbscript", "data", "file", "ssh", "git+ssh", "blob", "intent", "x-app", "httpx", "ftps", "wsss", "h"}
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for range 2000 {
		scheme := schemes[rng.IntN(len(schemes))]
		if rng.IntN(4) == 0 {
			b := make([]byte, 1+rng.IntN(6))
			for i := range b {
				b[i] = letters[rng.IntN(len(letters))]
			}
			scheme = string(b)
		}
		sends := sending[scheme]
		cased := []byte(scheme)
		for i := range cased {
			if rng.IntN(2) == 0 && cased[i] >= 'a' {
				cased[i] -= 'a' - 'A'
			}
		}
		rest := []string{"//example.com", "//example.com/%0Aalert(1)", "//finance@example.com/x", "//example.com:443/,x"}[rng.IntN(4)]
		v := string(cased) + ":" + rest
		doms, _, err := NewAnalyzer(trusted).Hosts(v, false)
		require.NoError(t, err, v)
		require.Len(t, doms, 1, v)
		assert.Equal(t, sends, doms[0].Trusted, v)
		assert.Equal(t, !sends, hasWarning(doms[0], WarnNoSend), v)
	}
}

// TestInvalidPortNeverTrusted: a URL whose port the WHATWG URL standard
// refuses is not a URL, however the port is spelled.
func TestInvalidPortNeverTrusted(t *testing.T) {
	trusted, err := PrepareTrusted([]string{"example.com"})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		port := rng.IntN(200000)
		spelled := strings.Repeat("0", rng.IntN(4)) + fmt.Sprint(port)
		v := "https://example.com:" + spelled + []string{"", "/", "/x?y"}[rng.IntN(3)]
		doms, _, err := NewAnalyzer(trusted).Hosts(v, false)
		require.NoError(t, err, v)
		badge := len(doms) == 1 && doms[0].Trusted
		assert.Equal(t, port <= 65535, badge, v)
	}
}

func hasWarning(d Domain, w string) bool {
	for _, g := range d.Warnings {
		if g == w {
			return true
		}
	}
	return false
}

// FuzzParseMailto: a mailto: URI never panics the reader, every host it
// finds is a recipient's, and every host it finds is listed.
func FuzzParseMailto(f *testing.F) {
	for _, s := range []string{"a@b.c?bcc=x%40d.e", "?to=a%40b.c,d@e.f&cc=%zz", "a@b.c?x%40y.z=1&&=&cc", "%22a%40b%22@c.d"} {
		f.Add(s)
	}
	trusted, err := PrepareTrusted([]string{"b.c"})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		m := parseMailto(s)
		for _, h := range m.hosts {
			require.NotEmpty(t, h)
			require.NotContains(t, h, "@")
		}
		doms, notOne, err := NewAnalyzer(trusted).Hosts("mailto:"+s, false)
		if err != nil {
			return // a recipient's domain is no domain name: the card refuses it
		}
		trustedN := 0
		for _, d := range doms {
			if d.Trusted {
				trustedN++
			}
		}
		if len(m.hosts) > 1 {
			require.True(t, notOne)
			require.Zero(t, trustedN)
		}
		require.LessOrEqual(t, trustedN, 1)
	})
}

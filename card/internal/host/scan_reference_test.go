package host

import (
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The address and URL readers as they were before scanHosts was made
// linear, kept as the reference the linear one must agree with.

// parseURL reads s as a browser would and returns its host. A URL without
// a host (a mailto: URL is read as its address) is not a target.
func refParseURL(s string) (target, bool) {
	// Browsers strip leading and trailing C0 controls and spaces, and
	// remove every tab and newline.
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	s = refDropTabsAndNewlines(s)
	scheme, rest, ok := refUrlScheme(s)
	if !ok {
		return target{}, false
	}
	special := refIsSpecialScheme(scheme)
	switch {
	case strings.EqualFold(scheme, "mailto"):
		addr, _, _ := strings.Cut(rest, "?")
		if u, err := url.PathUnescape(addr); err == nil {
			addr = u
		}
		return refParseMailbox(addr)
	case special:
		rest = strings.TrimLeft(rest, `/\`)
	case strings.HasPrefix(rest, "//"):
		rest = rest[2:]
	default:
		return target{}, false
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '/' || c == '?' || c == '#' || special && c == '\\' {
			end = i
			break
		}
	}
	auth := rest[:end]
	t := target{}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		t.decoy = strings.ContainsAny(auth[:i], "@.")
		auth = auth[i+1:]
	}
	host, ok := refSplitHostPort(auth)
	if !ok || host == "" {
		return target{}, false
	}
	if strings.Contains(host, "%") {
		u, err := url.PathUnescape(host)
		if err != nil || !utf8.ValidString(u) {
			return target{}, false
		}
		host = u
	}
	if strings.ContainsAny(host, forbiddenHost) && !strings.HasPrefix(auth, "[") {
		return target{}, false
	}
	t.host = host
	return t, true
}

// splitHostPort splits host[:port] or [v6]:port; the port must be digits.
func refSplitHostPort(s string) (string, bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return "", false
		}
		host, rest := s[1:i], s[i+1:]
		if rest != "" && !refIsPort(strings.TrimPrefix(rest, ":")) || rest != "" && rest[0] != ':' {
			return "", false
		}
		// Brackets hold an IPv6 address and nothing else (no zone), as
		// the WHATWG URL standard parses them.
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		return host, true
	}
	host, port, found := strings.Cut(s, ":")
	if found && !refIsPort(port) {
		return "", false
	}
	return host, true
}

// parseMailbox reads s as one RFC 5322 address: an addr-spec
// (local@domain, the local part a dot-atom or a quoted string) or a
// name-addr (display name <local@domain>).
func refParseMailbox(s string) (target, bool) {
	if strings.HasSuffix(s, ">") {
		i := strings.LastIndexByte(s, '<')
		if i < 0 {
			return target{}, false
		}
		name := s[:i]
		if strings.ContainsAny(name, "<>") || !refValidDisplayName(name) {
			return target{}, false
		}
		t, ok := refParseAddrSpec(s[i+1 : len(s)-1])
		t.decoy = t.decoy || strings.ContainsAny(name, "@")
		return t, ok
	}
	return refParseAddrSpec(s)
}

// validDisplayName accepts a phrase of words and quoted strings.
func refValidDisplayName(s string) bool {
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && strings.IndexByte("()<>[]:;@\\,", c) >= 0:
			return false
		case c < 0x20:
			return false
		}
	}
	return !inQuote
}

func refParseAddrSpec(s string) (target, bool) {
	var local, domain string
	t := target{}
	if strings.HasPrefix(s, `"`) {
		i := 1
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' {
				i++
				continue
			}
			if c == '"' {
				break
			}
			if c < 0x20 || c == 0x7f {
				return target{}, false
			}
		}
		if i >= len(s) || i+1 >= len(s) || s[i+1] != '@' {
			return target{}, false
		}
		local, domain = s[:i+1], s[i+2:]
		t.decoy = strings.Contains(local, "@")
	} else {
		var found bool
		local, domain, found = strings.Cut(s, "@")
		if !found || !refIsDotAtom(local) {
			return target{}, false
		}
	}
	if domain == "" || strings.Contains(domain, "@") {
		return target{}, false
	}
	if strings.HasPrefix(domain, "[") {
		host, ok := refAddressLiteral(domain)
		if !ok {
			return target{}, false
		}
		t.host = host
		return t, true
	}
	for _, r := range domain {
		if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return target{}, false
		}
	}
	t.host = domain
	return t, true
}

// addressLiteral reads an RFC 5321 address literal: [dotted IPv4] or
// [IPv6:address]. A general address literal (another tag) names no host
// the card can judge, so it is not a target.
func refAddressLiteral(s string) (string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return "", false
	}
	in := s[1 : len(s)-1]
	v6, isV6 := strings.CutPrefix(in, "IPv6:")
	if isV6 {
		in = v6
	}
	a, err := netip.ParseAddr(in)
	if err != nil || a.Zone() != "" || a.Is6() != isV6 {
		return "", false
	}
	return in, true
}

// isDotAtom reports an RFC 5322 dot-atom, with RFC 6531's UTF-8 letters.
func refIsDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 0x80:
			if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
				return false
			}
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-/=?^_`{|}~.", r):
		default:
			return false
		}
	}
	return true
}

// scanHosts returns the hosts a reader could take a value to name: the
// text after each @, and the authority of each scheme:// (or special
// scheme:) in it, up to maxMentioned+1 of them. It finds more than the
// whole-value parsers, on purpose: a value naming a second host anywhere
// never gets a TRUSTED badge.
func refScanHosts(s string) []string {
	if !strings.ContainsAny(s, "@:") {
		return nil
	}
	s = refDropTabsAndNewlines(s)
	var hosts []string
	add := func(h string) {
		h = strings.TrimRight(h, ".。．｡-")
		if h == "" || !strings.ContainsAny(h, ".。．｡") && !strings.HasPrefix(h, "[") {
			return
		}
		for _, g := range hosts {
			if g == h {
				return
			}
		}
		hosts = append(hosts, h)
	}
	for i := 0; i < len(s) && len(hosts) <= maxMentioned; i++ {
		switch {
		case s[i] == '@':
			add(refHostRun(s[i+1:]))
			if h, ok := refCFWSDomain(s[i+1:]); ok {
				add(h)
			}
		case s[i] == ':' && i > 0:
			j := i
			for j > 0 && isSchemeByte(s[j-1]) {
				j--
			}
			scheme := s[j:i]
			if scheme == "" || !(refIsSpecialScheme(scheme) || strings.HasPrefix(s[i+1:], "//")) {
				continue
			}
			k := strings.IndexFunc(s[i:], unicode.IsSpace)
			if k < 0 {
				k = len(s) - i
			}
			if t, ok := refParseURL(s[j : i+k]); ok {
				add(strings.TrimRight(refHostRun(t.host), "."))
			}
		}
	}
	return hosts
}

// refCFWSDomain is the domain s names with RFC 5322's comments and
// white space dropped, read naively: each comment is walked character by
// character.
func refCFWSDomain(s string) (string, bool) {
	skip := func(s string) string {
		for s != "" {
			r, size := utf8.DecodeRuneInString(s)
			switch {
			case r == '(':
				depth, k := 0, 0
			walk:
				for ; k < len(s); k++ {
					switch s[k] {
					case '\\':
						k++
					case '(':
						depth++
					case ')':
						if depth--; depth == 0 {
							k++
							break walk
						}
					}
				}
				s = s[min(k, len(s)):]
			case unicode.IsSpace(r):
				s = s[size:]
			default:
				return s
			}
		}
		return s
	}
	rest := skip(s)
	used := len(rest) != len(s)
	var b strings.Builder
	for range maxCFWSLabels {
		run := refHostRun(rest)
		if run == "" || strings.HasPrefix(run, "[") {
			break
		}
		b.WriteString(run)
		rest = rest[len(run):]
		after := skip(rest)
		switch {
		case len(after) == len(rest):
		case strings.HasSuffix(run, "."):
			used, rest = true, after
			continue
		case strings.HasPrefix(after, "."):
			used, rest = true, skip(after[1:])
			b.WriteByte('.')
			continue
		}
		break
	}
	return b.String(), used
}

// hostRun returns the longest prefix of s made of characters that can be
// part of a host name, before IDNA mapping.
func refHostRun(s string) string {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 {
			return s[:i+1]
		}
	}
	for i, r := range s {
		if !(r == '-' || r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) ||
			r == '。' || r == '．' || r == '｡' || (r >= 0x80 && unicode.Is(unicode.Cf, r))) {
			return s[:i]
		}
	}
	return s
}

// dropTabsAndNewlines removes what browsers remove from a URL before
// parsing it.
func refDropTabsAndNewlines(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// specialSchemes are the WHATWG URL standard's special schemes, whose
// authority a backslash also ends.
func refIsSpecialScheme(s string) bool {
	switch strings.ToLower(s) {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// urlScheme returns the scheme of s and the rest after its colon.
func refUrlScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func refIsPort(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(strings.TrimLeft(s, "0"), 10, 64)
	return s == "" || strings.TrimLeft(s, "0") == "" || err == nil && n <= 65535
}

var scanTokens = []string{
	"http:", "https:", "HTTP:", "mailto:", "MailTo:", "ftp:", "git+ssh:", "a:", "0a:", "//", "/", `\`, "@", "a", "b.c", ".", ":",
	"[", "]", "::1", "[::1]", "1.2.3.4", "[1.2.3.4]", "IPv6:", "%", "%40", "%3A", "%3c", "%3E", "%zz", "%4", "<", ">", `"`, `\"`,
	"?", "#", " ", "\t", "\n", "\x01", "\x1f", "x.com", "80", ":80", ":65535", ":65536", ":099999", "é", "\u00a0", "\u3002", "-", ",", ";", "(", "..", "e\u0301",
	"\u200b", "_", "!", "user", "Dana ", "xn--p1ai",
	")", "(c)", " (", ") ", "(x@b.c)", "((", "))", `\(`, `\)`, " . ", ". ", " .", "\u2003", "evil", "net",
}

func randomScanInput(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(24) {
		b.WriteString(scanTokens[rng.IntN(len(scanTokens))])
	}
	return b.String()
}

// TestScanHostsMatchesReference: the linear scanner finds exactly the hosts
// the reading it replaced finds, in the same order.
func TestScanHostsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	for range 200000 {
		s := randomScanInput(rng)
		require.Equal(t, refScanHosts(s), scanHosts(s), "%q", s)
	}
}

// FuzzScanHosts: the linear scanner agrees with the reference.
//
//	go test ./card/internal/host -run '^$' -fuzz FuzzScanHosts -fuzztime 20s
func FuzzScanHosts(f *testing.F) {
	for _, s := range []string{"http:http:x@y.z:80", "mailto://a%40b.c?x", `mailto://"a" <b@c.d>`, "a://[::1]:80/", "http://@[::1]", "x@[1.2.3.4] y@b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		require.Equal(t, refScanHosts(s), scanHosts(s), "%q", s)
	})
}

// TestScanHostsLongRuns: text made of schemes, brackets, @ and escapes
// repeated to a quarter of a MiB is read in linear time. (The reading
// this replaced took minutes on these.)
func TestScanHostsLongRuns(t *testing.T) {
	for _, unit := range []string{"http:", "a://", "mailto://", "mailto://%41", "mailto://\"", "mailto://a@", "mailto://<", "@[", "http:[", "http://x@[", "http:x:1", "\x01http:",
		"@(", "@ (", "(@)", "@(@", "a@b . ", "@ b. (c) ", "@(\\)"} {
		s := strings.Repeat(unit, (256<<10)/len(unit))
		start := time.Now()
		scanHosts(s)
		scanHosts(s + ">")
		scanHosts(s + "]:80 @x.y")
		require.Less(t, time.Since(start), 20*time.Second, "%q", unit)
	}
}

// FuzzNameHelpers: the byte-wise helpers of the scanner and of Hosts say
// what the definitions they replace say, for any text.
//
//	go test ./card/internal/host -run '^$' -fuzz FuzzNameHelpers -fuzztime 10s
func FuzzNameHelpers(f *testing.F) {
	for _, s := range []string{"a.b.", "x。", "[::1]..", "ex\u0430mple.com-", "a\u200bb.c", " a\tb\u0085", "..[]", "é．", "\xff."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, refHostRun(s), hostRun(s), "hostRun %q", s)
		require.Equal(t, strings.ContainsAny(s, "@:"), NamesHost(s), "NamesHost %q", s)
		require.Equal(t, strings.TrimRight(s, ".。．｡-"), trimNameEnd(s), "trimNameEnd %q", s)
		require.Equal(t, strings.ContainsAny(s, ".。．｡"), hasDot(s), "hasDot %q", s)
		require.Equal(t, strings.Trim(strings.TrimRight(s, "."), "[]"), hostKey(s), "hostKey %q", s)
		require.Equal(t, strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0,
			hasSpaceOrControl(s), "hasSpaceOrControl %q", s)
	})
}

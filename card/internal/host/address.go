package host

import (
	"net/netip"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A value is given a TRUSTED badge only when the whole value is exactly one
// e-mail address, one URL or (for an argument the catalog declares as a
// domain) one host name, and it names no other host. The parsers below
// decide "exactly one": e-mail addresses as RFC 5322 and RFC 5321 (with
// RFC 6531's UTF-8) read them, URLs as browsers do (the WHATWG URL
// standard: tab and newline removed, a backslash is a slash in the special
// schemes, the host is what follows the last @ of the authority).

// target is the host a whole value sends something to.
type target struct {
	host   string   // the host as the parser resolved it, before IDNA
	decoy  bool     // text before the host (user info, quoted local part, display name) holds an @
	clean  bool     // the value holds no white space or control characters
	noSend bool     // a URL whose scheme sends nothing to its host (javascript:, data:, ssh:)
	more   []string // a mailto: URI's other recipients' hosts
	texts  []string // a mailto: URI's decoded text that is not a recipient, to search for hosts
	partly bool     // a mailto: URI some of whose recipients or escapes do not parse
	relay  []string // hosts a local part routes the mail on to (% or !): see relayHosts
	relays bool     // a local part holds a relay or source route: never trusted
}

// parseWhole reads s as exactly one address, URL or (asHost) host[:port].
func parseWhole(s string, asHost bool) (target, bool) {
	clean := !hasSpaceOrControl(s)
	// A URL has a scheme, which ends at a colon.
	if strings.IndexByte(s, ':') >= 0 {
		if t, ok := parseMailtoWhole(s); ok {
			t.clean = clean
			return t, true
		}
		if t, ok := parseURL(s); ok {
			t.clean = clean
			return t, true
		}
	}
	if t, ok := parseMailbox(s); ok {
		// A display name may hold spaces ("Dana Lee <dana@example.com>");
		// the address itself cannot.
		t.clean = strings.IndexFunc(s, unicode.IsControl) < 0 && !t.decoy
		return t, true
	}
	if asHost {
		if h, ok := splitHostPort(s); ok && h != "" && (strings.HasPrefix(s, "[") || !strings.ContainsAny(h, forbiddenHost)) {
			return target{host: h, clean: clean}, true
		}
	}
	return target{}, false
}

// parseMailtoWhole reads s, when it is a mailto: URI, as RFC 6068 does
// (see parseMailto); ok is false for any other value, and for a mailto:
// URI without a recipient that parses.
func parseMailtoWhole(s string) (target, bool) {
	if len(s) < len("mailto:") || !strings.EqualFold(s[:len("mailto:")], "mailto:") {
		if !strings.ContainsAny(s, "\t\n\r") && s != "" && s[0] > ' ' {
			return target{}, false // the common case: not a mailto: URI
		}
	}
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	s = dropTabsAndNewlines(s)
	scheme, rest, ok := urlScheme(s)
	if !ok || !strings.EqualFold(scheme, "mailto") {
		return target{}, false
	}
	m := parseMailto(rest)
	if len(m.hosts) == 0 {
		return target{}, false
	}
	return target{host: m.hosts[0], decoy: m.decoy, more: m.hosts[1:], texts: m.texts, partly: !m.whole, relay: m.relay, relays: m.route}, true
}

// hasSpaceOrControl reports white space or a control character in s.
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			return strings.IndexFunc(s[i:], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
		} else if c <= ' ' || c == 0x7f {
			return true
		}
	}
	return false
}

// dropTabsAndNewlines removes what browsers remove from a URL before
// parsing it.
func dropTabsAndNewlines(s string) string {
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

// forbiddenHost are the WHATWG URL standard's forbidden host code points
// that can reach a host here.
const forbiddenHost = " #%/:<>?@[\\]^|"

// specialSchemes are the WHATWG URL standard's special schemes, whose
// authority a backslash also ends.
func isSpecialScheme(s string) bool {
	if len(s) < 2 || len(s) > 5 {
		return false
	}
	var b [5]byte
	for i := 0; i < len(s); i++ {
		b[i] = s[i] | 0x20 // lower-cases letters; a scheme holds nothing it could confuse
	}
	switch string(b[:len(s)]) {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// sendsToHost reports a URL scheme whose use sends something to the URL's
// host, so that a trusted host may earn the URL a TRUSTED badge: http and
// https, ws and wss (a WebSocket connects to the host, parsed as for
// http), and ftp (a client connects to the host, parsed as a special
// scheme). Every other scheme is refused the badge, whatever its
// authority says: javascript:, vbscript: and data: run or show their own
// text and send nothing to the host; file: reads a local or shared file;
// and the card cannot know where an unknown scheme (an application's own,
// or ssh:, whose host is parsed otherwise) sends anything. A mailto: URI
// is read as its recipients' addresses instead (see parseMailto).
func sendsToHost(scheme string) bool {
	if len(scheme) < 2 || len(scheme) > 5 {
		return false
	}
	var b [5]byte
	for i := 0; i < len(scheme); i++ {
		b[i] = scheme[i] | 0x20
	}
	switch string(b[:len(scheme)]) {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// urlScheme returns the scheme of s and the rest after its colon.
func urlScheme(s string) (scheme, rest string, ok bool) {
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

// parseURL reads s as a browser would and returns its host. A URL without
// a host (a mailto: URL is read as its address) is not a target.
func parseURL(s string) (target, bool) {
	// Browsers strip leading and trailing C0 controls and spaces, and
	// remove every tab and newline.
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	s = dropTabsAndNewlines(s)
	scheme, rest, ok := urlScheme(s)
	if !ok {
		return target{}, false
	}
	special := isSpecialScheme(scheme)
	switch {
	case strings.EqualFold(scheme, "mailto"):
		addr, _, _ := strings.Cut(rest, "?")
		if u, err := url.PathUnescape(addr); err == nil {
			addr = u
		}
		return parseMailbox(addr)
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
	t := target{noSend: !sendsToHost(scheme)}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		t.decoy = strings.ContainsAny(auth[:i], "@.")
		auth = auth[i+1:]
	}
	host, ok := authorityHost(auth)
	if !ok {
		return target{}, false
	}
	t.host = host
	return t, true
}

// authorityHost is what parseURL makes of an authority after its last @.
func authorityHost(auth string) (string, bool) {
	host, ok := splitHostPort(auth)
	if !ok || host == "" {
		return "", false
	}
	if strings.Contains(host, "%") {
		u, err := url.PathUnescape(host)
		if err != nil || !utf8.ValidString(u) {
			return "", false
		}
		host = u
	}
	if strings.ContainsAny(host, forbiddenHost) && !strings.HasPrefix(auth, "[") {
		return "", false
	}
	return host, true
}

// splitHostPort splits host[:port] or [v6]:port; the port must be digits.
func splitHostPort(s string) (string, bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return "", false
		}
		host, rest := s[1:i], s[i+1:]
		if rest != "" && !isPort(strings.TrimPrefix(rest, ":")) || rest != "" && rest[0] != ':' {
			return "", false
		}
		// Brackets hold an IPv6 address and nothing else (no zone), as
		// the WHATWG URL standard parses them.
		if !isBracketHost(host) {
			return "", false
		}
		return host, true
	}
	host, port, found := strings.Cut(s, ":")
	if found && !isPort(port) {
		return "", false
	}
	return host, true
}

// maxIPv6Text is the length of the longest IPv6 address without a zone
// that netip parses: six groups of four hex digits and a dotted IPv4
// address ("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255").
const maxIPv6Text = 45

// isBracketHost reports an IPv6 address without a zone, what brackets may
// hold. Longer text is refused before netip reads it, so a long value
// costs nothing here.
func isBracketHost(host string) bool {
	if len(host) > maxIPv6Text {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Is6() && a.Zone() == ""
}

// maxPort is the largest port the WHATWG URL standard accepts; a URL with
// a larger one is not a URL at all.
const maxPort = 65535

// isPort reports a port the WHATWG URL standard accepts: digits (none at
// all, or leading zeros, included) of a number no larger than maxPort.
func isPort(s string) bool {
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		if v = v*10 + int(s[i]-'0'); v > maxPort {
			return false
		}
	}
	return true
}

// isDigits reports a string of ASCII digits only (or none).
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseMailbox reads s as one RFC 5322 address: an addr-spec
// (local@domain, the local part a dot-atom or a quoted string) or a
// name-addr (display name <local@domain>).
func parseMailbox(s string) (target, bool) {
	if strings.HasSuffix(s, ">") {
		i := strings.LastIndexByte(s, '<')
		if i < 0 {
			return target{}, false
		}
		name := s[:i]
		if strings.ContainsAny(name, "<>") || !validDisplayName(name) {
			return target{}, false
		}
		t, ok := parseAddrSpec(s[i+1 : len(s)-1])
		t.decoy = t.decoy || strings.ContainsAny(name, "@")
		return t, ok
	}
	return parseAddrSpec(s)
}

// validDisplayName accepts a phrase of words and quoted strings.
func validDisplayName(s string) bool {
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

func parseAddrSpec(s string) (target, bool) {
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
		if !found || !isDotAtom(local) {
			return target{}, false
		}
	}
	if strings.ContainsAny(local, "%!@") {
		t.relays, t.relay = true, relayHosts(local)
	}
	if domain == "" || strings.Contains(domain, "@") {
		return target{}, false
	}
	if strings.HasPrefix(domain, "[") {
		host, ok := addressLiteral(domain)
		if !ok {
			return target{}, false
		}
		t.host = host
		return t, true
	}
	if !isDomainText(domain) {
		return target{}, false
	}
	t.host = domain
	return t, true
}

// isDomainText reports a domain of an address: ASCII letters, digits,
// hyphens, dots and underscores, and any non-ASCII character (IDNA judges
// those).
func isDomainText(domain string) bool {
	for _, r := range domain {
		if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// maxLiteral is the longest address literal addressLiteral accepts:
// brackets, "IPv6:" and the longest IPv6 address netip parses.
const maxLiteral = 2 + len("IPv6:") + maxIPv6Text

// addressLiteral reads an RFC 5321 address literal: [dotted IPv4] or
// [IPv6:address]. A general address literal (another tag) names no host
// the card can judge, so it is not a target.
func addressLiteral(s string) (string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return "", false
	}
	if len(s) > maxLiteral {
		return "", false // longer than any address netip parses
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
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if !isAtomRune(r) {
			return false
		}
	}
	return true
}

// isAtomRune reports a character of an RFC 5322 atom, with RFC 6531's
// UTF-8 letters.
func isAtomRune(r rune) bool {
	switch {
	case r >= 0x80:
		return unicode.IsGraphic(r) && !unicode.IsSpace(r)
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-/=?^_`{|}~.", r)
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// hostRun returns the longest prefix of s made of characters that can be
// part of a host name, before IDNA mapping.
func hostRun(s string) string {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 {
			return s[:i+1]
		}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			return s[:i+len(nameRun(s[i:]))]
		} else if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return s[:i]
		}
	}
	return s
}

// nameRun is hostRun for s that does not start with a bracket.
func nameRun(s string) string {
	for i, r := range s {
		if !(r == '-' || r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) ||
			r == '。' || r == '．' || r == '｡' || (r >= 0x80 && unicode.Is(unicode.Cf, r))) {
			return s[:i]
		}
	}
	return s
}

// relayHosts returns the hosts a local part routes mail on to, as the old
// relay conventions read it: "user%relay.example" is sent on to
// relay.example by the host after the @, "relay.example!user" by UUCP
// bang paths, and a quoted "user@relay.example" by a host that unquotes
// it. Mail software that honours them delivers somewhere else than the
// host after the @, so such an address is never badged, and these hosts
// are listed.
func relayHosts(local string) []string {
	local = strings.Trim(local, `"`)
	var out []string
	for _, part := range strings.FieldsFunc(local, func(r rune) bool { return r == '%' || r == '!' || r == '@' }) {
		if h := trimNameEnd(hostRun(part)); h == part && hasDot(h) && len(out) < maxMentioned {
			out = append(out, h)
		}
	}
	return out
}

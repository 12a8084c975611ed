package host

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMentioned is how many hosts of one value the card analyses; a value
// naming more says so. It bounds the work IDNA and the public suffix list
// do for one string.
const maxMentioned = 8

// scanHosts returns the hosts a reader could take a value to name: the
// text after each @, and the authority of each scheme:// (or special
// scheme:) in it, up to maxMentioned+1 of them. It finds more than the
// whole-value parsers, on purpose: a value naming a second host anywhere
// never gets a TRUSTED badge.
//
// Each scheme is read as parseURL reads the text from it to the next white
// space, but in time linear in the length of s however many schemes it
// holds ("http:http:http:..."): what the URLs of one run of text share
// (where their authority ends, its last @, the mailto address's decoded
// form) is found once, and each URL's own part is read only as far as it
// can be a host.
func scanHosts(s string) []string { return appendHosts(nil, s) }

// appendHosts is scanHosts, appending the hosts to buf[:0].
func appendHosts(buf []string, s string) []string { return appendMoreHosts(buf[:0], s) }

// appendMoreHosts appends the hosts of s that hosts does not hold yet, up
// to maxMentioned+1 in all.
func appendMoreHosts(hosts []string, s string) []string {
	if !NamesHost(s) {
		return hosts
	}
	sc := hostScanner{s: dropTabsAndNewlines(s), hosts: hosts}
	s = sc.s
	for i := 0; i < len(s) && len(sc.hosts) <= maxMentioned; i++ {
		switch {
		case s[i] == '@':
			sc.add(sc.hostRunAt(i + 1))
			if h, ok := sc.cfwsDomainAt(i + 1); ok {
				sc.add(h)
			}
		case s[i] == ':' && i > 0:
			j := i
			for j > 0 && isSchemeByte(s[j-1]) {
				j--
			}
			scheme := s[j:i]
			if scheme == "" || !(isSpecialScheme(scheme) || strings.HasPrefix(s[i+1:], "//")) {
				continue
			}
			if host, ok := sc.urlHost(j, i); ok {
				sc.add(strings.TrimRight(hostRun(host), "."))
			}
		}
	}
	return sc.hosts
}

// hostScanner holds what scanHosts has found about its string so far.
// Every position it remembers comes with the position the search for it
// started from; the positions asked about only grow, so each part of the
// string is searched a bounded number of times.
type hostScanner struct {
	s     string
	hosts []string

	space, bracket next // the next white space; the next ']'
	query          next // the next '?'
	trimFor, trim  int  // the end of the text before white space ending at trimFor, less trailing controls

	auth [2]authEnds // by whether the scheme is special
	mail mailRun

	closes map[int]int // the end of the comment each '(' opens, once asked; see cfwsDomainAt
}

// maxCFWSLabels bounds the labels cfwsDomainAt joins: more than a DNS
// name can hold.
const maxCFWSLabels = 128

// cfwsDomainAt reads the domain an address names after its @ (at i-1)
// when RFC 5322's comments and folding white space stand after the @ or
// around the dots of the domain, as its obsolete syntax allows and mail
// software still reads ("a@ example.com", "a@(note)example.com",
// "a@example . com"): the runs of name characters, joined by the dots
// between them, the white space and comments dropped. ok is false when
// no such white space or comment stands there; hostRunAt then reads the
// domain. Comments nest and take backslash escapes; one left open runs
// to the end of the text. Each comment is crossed in one step, so the
// whole scan stays linear: a run is read only from the @ or dot just
// before it, and an @ inside a comment reads only to the comment's end.
func (sc *hostScanner) cfwsDomainAt(i int) (string, bool) {
	s := sc.s
	j := sc.skipCFWS(i)
	if j == i {
		// The common case, no white space or comment after the @: hostRunAt's
		// reading, unless some follows the run.
		end := i + len(hostRun(s[i:]))
		if end == i || sc.skipCFWS(end) == end {
			return "", false
		}
	}
	used := j != i
	var b strings.Builder
	for range maxCFWSLabels {
		run := hostRun(s[j:])
		if run == "" || strings.HasPrefix(run, "[") {
			break
		}
		b.WriteString(run)
		j += len(run)
		k := sc.skipCFWS(j)
		switch {
		case k == j:
		case strings.HasSuffix(run, "."):
			used, j = true, k // "example. com"
			continue
		case k < len(s) && s[k] == '.':
			used, j = true, sc.skipCFWS(k+1) // "example . com"
			b.WriteByte('.')
			continue
		}
		break
	}
	return b.String(), used
}

// skipCFWS returns the position after the white space and comments at
// s[i:].
func (sc *hostScanner) skipCFWS(i int) int {
	s := sc.s
	for i < len(s) {
		switch r, size := utf8.DecodeRuneInString(s[i:]); {
		case r == '(':
			i = sc.commentEnd(i)
		case unicode.IsSpace(r):
			i += size
		default:
			return i
		}
	}
	return i
}

// commentEnd returns the position after the comment the '(' at i opens
// (len(s) when it is never closed), reading every comment of the text
// in one pass the first time.
func (sc *hostScanner) commentEnd(i int) int {
	s := sc.s
	if sc.closes == nil {
		sc.closes = map[int]int{}
		var open []int
		for k := 0; k < len(s); k++ {
			switch s[k] {
			case '\\':
				k++
			case '(':
				open = append(open, k)
			case ')':
				if n := len(open); n > 0 {
					sc.closes[open[n-1]] = k + 1
					open = open[:n-1]
				}
			}
		}
		for _, k := range open {
			sc.closes[k] = len(s)
		}
	}
	if end, ok := sc.closes[i]; ok {
		return end
	}
	return len(s) // an escaped '(' is never asked about: none follows an @, a space or a comment
}

func (sc *hostScanner) add(h string) {
	h = trimNameEnd(h)
	if h == "" || !hasDot(h) && !strings.HasPrefix(h, "[") {
		return
	}
	for _, g := range sc.hosts {
		if g == h {
			return
		}
	}
	sc.hosts = append(sc.hosts, h)
}

// NamesHost reports whether s can name a host at all: it holds an @ or a
// colon (strings.ContainsAny(s, "@:"), two byte searches).
func NamesHost(s string) bool {
	return strings.IndexByte(s, '@') >= 0 || strings.IndexByte(s, ':') >= 0
}

// dots are the characters IDNA maps to a label separator.
const dots = ".。．｡"

// trimNameEnd is strings.TrimRight(h, dots+"-").
func trimNameEnd(h string) string {
	for h != "" {
		if c := h[len(h)-1]; c == '.' || c == '-' {
			h = h[:len(h)-1]
			continue
		} else if c < 0x80 {
			return h
		}
		r, size := utf8.DecodeLastRuneInString(h)
		if r != '。' && r != '．' && r != '｡' {
			return h
		}
		h = h[:len(h)-size]
	}
	return h
}

// hasDot is strings.ContainsAny(h, dots).
func hasDot(h string) bool {
	return strings.IndexByte(h, '.') >= 0 || nonASCII(h) && strings.ContainsAny(h, dots[1:])
}

// next finds the first position at or after a given one where a condition
// holds, remembering the answer for later questions.
type next struct {
	from, at int // at is the first match at or after from (len(s) if none)
	known    bool
}

func (n *next) find(s string, from int, index func(string) int) int {
	if n.known && from >= n.from && from <= n.at {
		return n.at
	}
	n.from, n.known = from, true
	if k := index(s[from:]); k >= 0 {
		n.at = from + k
	} else {
		n.at = len(s)
	}
	return n.at
}

func isSpaceIndex(s string) int  { return strings.IndexFunc(s, unicode.IsSpace) }
func closeIndex(s string) int    { return strings.IndexByte(s, ']') }
func questionIndex(s string) int { return strings.IndexByte(s, '?') }

// hostRunAt is hostRun(s[i:]).
func (sc *hostScanner) hostRunAt(i int) string {
	s := sc.s
	if i < len(s) && s[i] == '[' {
		if k := sc.bracket.find(s, i, closeIndex); k < len(s) {
			return s[i : k+1]
		}
		return "" // '[' is not part of a name
	}
	return hostRun(s[i:])
}

// tokenEnd returns the end of the text parseURL is given for the scheme
// whose colon is at i: up to the next white space, less the C0 controls
// and spaces parseURL trims from its end.
func (sc *hostScanner) tokenEnd(i int) int {
	end := sc.space.find(sc.s, i, isSpaceIndex)
	if sc.trimFor != end || sc.trim == 0 {
		t := end
		for t > i+1 && sc.s[t-1] <= 0x20 {
			t--
		}
		sc.trimFor, sc.trim = end, t
	}
	return sc.trim
}

// urlHost returns the host parseURL(s[j:end]) finds, where the scheme
// s[j:i] ends at the colon at i and end is the next white space.
func (sc *hostScanner) urlHost(j, i int) (string, bool) {
	s := sc.s
	c := s[j]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return "", false // parseURL finds no scheme
	}
	end := sc.tokenEnd(i)
	scheme := s[j:i]
	if strings.EqualFold(scheme, "mailto") {
		return sc.mailtoHost(i, end)
	}
	special := isSpecialScheme(scheme)
	a := i + 1
	if special {
		for a < end && (s[a] == '/' || s[a] == '\\') {
			a++
		}
	} else {
		a += 2 // scanHosts only asks when "//" follows
	}
	ae := &sc.auth[0]
	if special {
		ae = &sc.auth[1]
	}
	e := min(ae.delim.find(s, a, ae.index(special)), end)
	at := ae.lastAt(s, a, e)
	if at >= 0 {
		// Every URL whose authority ends at e with this @ has the same host.
		if ae.hostFor != [2]int{at + 1, e} {
			ae.hostFor = [2]int{at + 1, e}
			ae.host, ae.ok = authorityHost(s[at+1 : e])
		}
		return ae.host, ae.ok
	}
	if a < e && s[a] == '[' {
		// [v6]:port, as splitHostPort reads it.
		k := sc.bracket.find(s, a, closeIndex)
		if k >= e {
			return "", false
		}
		if k+1 < e && (s[k+1] != ':' || !ae.portTo(s, k+2, e)) {
			return "", false
		}
		host := s[a+1 : k]
		if !isBracketHost(host) {
			return "", false
		}
		return host, true
	}
	return authorityHost(s[a:e])
}

// authEnds remembers, for one kind of scheme, where authorities end and
// what ends them.
type authEnds struct {
	delim   next
	atEnd   int // the authority end the last @ was looked for before
	atFrom  int // ... looking back as far as here
	atPos   int // ... and found here (-1: not between atFrom and atEnd)
	atKnown bool

	hostFor [2]int // the authority after an @ whose host is known
	host    string
	ok      bool

	portFor [2]int // the port whose digits were checked
	portOK  bool
}

func (ae *authEnds) index(special bool) func(string) int {
	if special {
		return func(s string) int { return strings.IndexAny(s, `/?#\`) }
	}
	return func(s string) int { return strings.IndexAny(s, "/?#") }
}

// lastAt returns the last @ in s[a:e], or -1.
func (ae *authEnds) lastAt(s string, a, e int) int {
	if !ae.atKnown || ae.atEnd != e || a < ae.atFrom {
		ae.atKnown, ae.atEnd, ae.atFrom = true, e, a
		ae.atPos = strings.LastIndexByte(s[a:e], '@')
		if ae.atPos >= 0 {
			ae.atPos += a
		}
	}
	if ae.atPos < a {
		return -1
	}
	return ae.atPos
}

// portTo reports whether s[from:e] is all digits.
func (ae *authEnds) portTo(s string, from, e int) bool {
	if ae.portFor != [2]int{from, e} {
		ae.portFor, ae.portOK = [2]int{from, e}, isPort(s[from:e])
	}
	return ae.portOK
}

// mailRun remembers what the mailto: URLs whose address runs to the same
// end share: where percent-decoding the address is valid from, the decoded
// form, and, for each spelling, what does not depend on where the URL
// starts.
type mailRun struct {
	end     int // the addresses end here; 0 until the first
	from    int // the first address of the run starts here
	lastBad int // the last invalid % escape in s[from:end], or -1

	dec          string // s[rawAt:end] decoded is dec[decAt:]
	haveDec      bool
	rawAt, decAt int

	forms [2]mailForm // the raw spelling, the decoded one
}

// mailForm is one spelling f of the run's addresses; each address is a
// suffix of f.
type mailForm struct {
	known    bool
	nameAddr bool // f ends with '>'
	lt       int  // the last '<' in f after the first address's start, or -1
	angle    int  // the last '<' or '>' before lt, or -1
	host     string
	ok       bool // parseAddrSpec of what lies between lt and the final '>'
}

func (f *mailForm) learn(s string, from int) {
	f.known = true
	f.nameAddr = strings.HasSuffix(s, ">")
	f.lt, f.angle = -1, -1
	if !f.nameAddr {
		return
	}
	if k := strings.LastIndexByte(s[from:], '<'); k >= 0 {
		f.lt = from + k
		if k := strings.LastIndexAny(s[from:f.lt], "<>"); k >= 0 {
			f.angle = from + k
		}
		t, ok := parseAddrSpec(s[f.lt+1 : len(s)-1])
		f.host, f.ok = t.host, ok
	}
}

// mailtoHost returns the host parseURL finds for the mailto: URL whose
// colon is at i and which ends at end: parseMailbox of the address before
// any '?', percent-decoded when that is valid.
func (sc *hostScanner) mailtoHost(i, end int) (string, bool) {
	s := sc.s
	start := i + 1
	q := min(sc.query.find(s, start, questionIndex), end)
	m := &sc.mail
	if m.end != q || start < m.from || start < m.rawAt {
		*m = mailRun{end: q, from: start, lastBad: lastBadEscape(s, start, q)}
	}
	// f is the spelling parseMailbox reads, x = f[off:] the address.
	f, off, form := s[:q], start, 0
	if m.lastBad < start {
		if !m.haveDec {
			m.haveDec, m.rawAt, m.decAt = true, start, 0
			m.dec, _ = url.PathUnescape(s[start:q]) // valid: no bad escape from here
		}
		for m.rawAt < start {
			if s[m.rawAt] == '%' {
				m.rawAt += 3
			} else {
				m.rawAt++
			}
			m.decAt++
		}
		f, off, form = m.dec, m.decAt, 1
	}
	fm := &m.forms[form]
	if !fm.known {
		fm.learn(f, off)
	}
	if fm.nameAddr {
		if fm.lt < off || fm.angle >= off || !validDisplayName(f[off:fm.lt]) {
			return "", false
		}
		return fm.host, fm.ok
	}
	if strings.HasPrefix(f[off:], `"`) { // not after "//", but parseAddrSpec reads it so
		t, ok := parseAddrSpec(f[off:])
		return t.host, ok
	}
	return unquotedAddrSpecHost(f[off:])
}

// lastBadEscape returns the last % in s[from:end] that does not start a
// valid escape of s[from:end] (two hex digits), or -1.
func lastBadEscape(s string, from, end int) int {
	bad := -1
	for k := from; k < end; k++ {
		if s[k] == '%' && (k+2 >= end || !isHex(s[k+1]) || !isHex(s[k+2])) {
			bad = k
		}
	}
	return bad
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// unquotedAddrSpecHost is parseAddrSpec(s) for s that does not start with
// a quote, reading s only as far as it can be an address: the local part
// up to its first character that is not allowed, the domain likewise.
func unquotedAddrSpecHost(s string) (string, bool) {
	at := -1
	for k, r := range s {
		if r == '@' {
			at = k
			break
		}
		if !isAtomRune(r) {
			return "", false
		}
	}
	if at < 0 {
		return "", false
	}
	local, domain := s[:at], s[at+1:]
	if local == "" || local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") || domain == "" {
		return "", false
	}
	if domain[0] == '[' {
		if len(domain) > maxLiteral || strings.Contains(domain, "@") {
			return "", false
		}
		return addressLiteral(domain)
	}
	if !isDomainText(domain) { // an @ in it fails here
		return "", false
	}
	return domain, true
}

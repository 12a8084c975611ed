package flood

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrInvalidTarget is wrapped when a target constructor cannot read what
// it was given as an e-mail address, a host or a repository.
var ErrInvalidTarget = errors.New("flood: invalid target")

// MaxTargetLen bounds the text a target constructor reads.
const MaxTargetLen = 2048

// Target is what an effect reaches outside the team: a mail domain, a web
// domain, a repository. It is the one thing about a flood the attacker
// cannot vary at will: it can spread its requests over sessions, agents
// and users, and spell them differently, but they must all reach the
// target it controls. Limits keyed by the user and the target
// ([Limits.Target], [Limits.TargetLockout]) and the first-contact rule
// ([Limits.FirstContact], [Limits.FirstContactLockout]) count there.
//
// A Target is built by [EmailTarget], [DomainTarget], [RepositoryTarget]
// or [NamedTarget], which fold every spelling of one target into one key:
// letter case, a trailing dot, Unicode and A-label forms of a domain,
// plus-addressing and any other local part, subdomains of one registrable
// domain. The zero Target is none: a request without one counts against
// no target limit.
type Target struct {
	key string
}

// String returns the target's key, such as "domain:example.com" or
// "repo:github.com/owner/name". It names the target; keep it out of logs
// that must not name recipients.
func (t Target) String() string { return t.key }

// IsZero reports whether t is no target.
func (t Target) IsZero() bool { return t.key == "" }

// EmailTarget returns the target of mail sent to addr: the registrable
// domain of its host (eTLD+1 by the public suffix list). The local part is
// ignored, since every mailbox of a domain reaches whoever holds the
// domain: payout+1@attacker.example and Payout@ATTACKER.example. are one
// target. addr is a bare address (local@host), or "Name <local@host>".
func EmailTarget(addr string) (Target, error) {
	if err := checkLen(addr); err != nil {
		return Target{}, err
	}
	if i := strings.LastIndexByte(addr, '<'); i >= 0 && strings.HasSuffix(addr, ">") {
		addr = addr[i+1 : len(addr)-1]
	}
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 {
		return Target{}, fmt.Errorf("%w: not an e-mail address", ErrInvalidTarget)
	}
	host := addr[at+1:]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return ipTarget(strings.TrimPrefix(host[1:len(host)-1], "IPv6:"))
	}
	return domainTarget(host)
}

// DomainTarget returns the target of an effect that reaches host: its
// registrable domain, so that a.attacker.example and ATTACKER.example.
// are one target. host may also be a URL ("https://host/path"), whose
// host is taken, or an IP address, which is its own target.
func DomainTarget(host string) (Target, error) {
	if err := checkLen(host); err != nil {
		return Target{}, err
	}
	if strings.Contains(host, "://") {
		u, err := url.Parse(host)
		if err != nil || u.Hostname() == "" {
			return Target{}, fmt.Errorf("%w: not a URL with a host", ErrInvalidTarget)
		}
		host = u.Hostname()
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ipTarget(host)
	}
	return domainTarget(host)
}

// RepositoryTarget returns the target of an effect on a source
// repository, written as host/owner/name, as an https or ssh URL, or as
// git@host:owner/name; a ".git" suffix, a trailing slash and letter case
// do not matter (the large forges treat owner and name without case).
// The host is kept whole, not reduced to its registrable domain: two
// forges under one domain are two targets.
func RepositoryTarget(repo string) (Target, error) {
	if err := checkLen(repo); err != nil {
		return Target{}, err
	}
	s := repo
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return Target{}, fmt.Errorf("%w: not a repository URL", ErrInvalidTarget)
		}
		s = u.Hostname() + "/" + strings.TrimPrefix(u.Path, "/")
	case strings.Contains(s, "@") && strings.Contains(s, ":"):
		// scp-like: git@host:owner/name
		s = s[strings.IndexByte(s, '@')+1:]
		s = strings.Replace(s, ":", "/", 1)
	}
	host, path, ok := strings.Cut(s, "/")
	if !ok {
		return Target{}, fmt.Errorf("%w: repository names no path", ErrInvalidTarget)
	}
	h, err := asciiHost(host)
	if err != nil {
		return Target{}, err
	}
	path = strings.ToLower(strings.Trim(path, "/"))
	path = strings.TrimSuffix(path, ".git")
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return Target{}, fmt.Errorf("%w: repository path has an empty or relative segment", ErrInvalidTarget)
		}
	}
	if len(parts) < 2 {
		return Target{}, fmt.Errorf("%w: repository path names no owner and name", ErrInvalidTarget)
	}
	return Target{key: "repo:" + h + "/" + strings.Join(parts, "/")}, nil
}

// NamedTarget returns a target the caller has already reduced to one key
// per target, of a kind of its own (an account number, a phone number):
// the pair is taken exactly as given, so the caller owns its spellings.
// It is the zero Target when id is empty.
func NamedTarget(kind, id string) Target {
	if id == "" {
		return Target{}
	}
	return Target{key: "named:" + fmt.Sprint(len(kind)) + ":" + kind + ":" + id}
}

func checkLen(s string) error {
	switch {
	case len(s) > MaxTargetLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidTarget, MaxTargetLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidTarget)
	}
	return nil
}

// domainTarget reduces a host name to its registrable domain.
func domainTarget(host string) (Target, error) {
	h, err := asciiHost(host)
	if err != nil {
		return Target{}, err
	}
	// A host whose last label is a number is an IPv4 address however it
	// is spelled (127.1, 0x7f.0.0.1, 2130706433, 0.0.0.0. with its
	// trailing dot), as a browser reads it (the WHATWG URL standard's IPv4
	// parser): one target, the address's, or no target at all.
	if a, numeric, ok := whatwgIPv4(h); numeric {
		if !ok {
			return Target{}, fmt.Errorf("%w: a numeric host that is not an IPv4 address", ErrInvalidTarget)
		}
		return Target{key: "ip:" + a.String()}, nil
	}
	if reg, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		h = reg
	}
	// A public suffix itself (or a name publicsuffix cannot split) is its
	// own target.
	return Target{key: "domain:" + h}, nil
}

// whatwgIPv4 parses h as the WHATWG URL standard's IPv4 parser does:
// numeric says whether its last label is a number (decimal, octal with a
// leading 0, or hexadecimal with 0x), which makes it an IPv4 address or
// an invalid host; ok whether it is a valid one, then a.
func whatwgIPv4(h string) (a netip.Addr, numeric, ok bool) {
	parts := strings.Split(h, ".")
	if !endsInNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, false
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	var v uint64
	for i, p := range parts {
		n, isNum := ipv4Number(p)
		if !isNum {
			return netip.Addr{}, true, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, true, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(8 * (4 - len(parts) + 1))
		if n >= 1<<rest {
			return netip.Addr{}, true, false
		}
		v = v<<rest | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// endsInNumber is the WHATWG URL standard's test of a host's last label:
// all digits, or 0x followed by hexadecimal digits.
func endsInNumber(last string) bool {
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// ipv4Number reads one part of a WHATWG IPv4 address: 0x for
// hexadecimal, a leading 0 for octal, decimal otherwise; at most 32 bits.
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true // "0x" alone is zero
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	if len(p) > 11 {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 33)
	if err != nil || n > 1<<32-1 {
		return 0, false
	}
	return n, true
}

func ipTarget(s string) (Target, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return Target{}, fmt.Errorf("%w: not an IP address", ErrInvalidTarget)
	}
	return Target{key: "ip:" + a.Unmap().WithZone("").String()}, nil
}

// lookup maps a host name as a browser's address bar would (UTS #46,
// lower case, full-width dots), then converts it to A-labels.
var lookup = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// asciiHost returns host in its A-label form, lower case, without a
// trailing dot.
// A host that is not UTF-8 (a URL's percent-escapes may decode to any
// bytes), or whose A-labels do not convert back to themselves (the
// converter turned something it could not read into a label), is no host.
func asciiHost(host string) (string, error) {
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("%w: host is not UTF-8", ErrInvalidTarget)
	}
	h, err := lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%w: host fails IDNA conversion", ErrInvalidTarget)
	}
	if again, err := lookup.ToASCII(h); err != nil || again != h {
		return "", fmt.Errorf("%w: host fails IDNA conversion", ErrInvalidTarget)
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.Contains(h, "..") || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") {
		return "", fmt.Errorf("%w: empty host or label", ErrInvalidTarget)
	}
	return h, nil
}

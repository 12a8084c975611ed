package card

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Warnings a domain can carry; the views spell them out.
const (
	warnMixedScript     = "mixed-script"      // a label mixes scripts; Unicode form not shown
	warnLookalikeLabel  = "lookalike-label"   // a label written in look-alikes of Latin letters
	warnLookalike       = "lookalike"         // looks like a trusted domain but is not one
	warnContainsTrusted = "contains-trusted"  // a trusted name inside another registrable domain
	warnNoRegistrable   = "no-registrable"    // the host is a public suffix itself
	warnUnlistedSuffix  = "unlisted-suffix"   // the top-level domain is not a known public suffix
	warnIP              = "ip-address"        // a literal IP address, not a name
	warnInvalid         = "invalid-domain"    // not a valid domain name (only for names inside longer text)
	warnHiddenNonASCII  = "non-ascii-in-name" // the A-label form hides non-ASCII letters
)

func warnText(w string) string {
	switch w {
	case warnMixedScript:
		return "mixes scripts within a label; the Unicode form is not shown"
	case warnLookalikeLabel:
		return "a label is written in letters that imitate Latin ones; the Unicode form is not shown"
	case warnLookalike:
		return "LOOKS LIKE a trusted domain but is a different one"
	case warnContainsTrusted:
		return "contains a trusted domain's name but belongs to a different registrable domain"
	case warnNoRegistrable:
		return "is a public suffix: no registrable domain"
	case warnUnlistedSuffix:
		return "its top-level domain is not a known public suffix"
	case warnIP:
		return "is an IP address, not a domain name"
	case warnInvalid:
		return "is not a valid domain name"
	case warnHiddenNonASCII:
		return "is written in A-label (xn--) form of non-ASCII letters"
	}
	return w
}

// strictIDNA is the IDNA2008 (UTS #46, non-transitional) lookup profile with
// every check on: a name it refuses is never shown as a domain.
var strictIDNA = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckHyphens(true),
	idna.CheckJoiners(true),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

// trustedDomain is an entry of Context.Trusted, normalized once per render.
type trustedDomain struct {
	ascii       string
	registrable string
	skel        string // skeleton of the registrable domain's Unicode form
}

func prepareTrusted(list []string) ([]trustedDomain, error) {
	out := make([]trustedDomain, 0, len(list))
	for i, t := range list {
		ascii, err := strictIDNA.ToASCII(strings.TrimSuffix(t, "."))
		if err != nil {
			return nil, fmt.Errorf("%w: trusted domain %d is not a domain name", ErrBadContext, i)
		}
		reg, err := publicsuffix.EffectiveTLDPlusOne(ascii)
		if err != nil {
			reg = ascii
		}
		uni, err := strictIDNA.ToUnicode(reg)
		if err != nil {
			return nil, fmt.Errorf("%w: trusted domain %d is not a domain name", ErrBadContext, i)
		}
		out = append(out, trustedDomain{ascii: ascii, registrable: reg, skel: skeleton(uni)})
	}
	return out, nil
}

// hostHit is a host name found in a string.
type hostHit struct {
	host  string
	whole bool // the string is just this address, URL or name
}

// findHosts returns the host names of the e-mail addresses and URLs in s,
// and all of s when asHost is set and s is neither.
func findHosts(s string, asHost bool) []hostHit {
	if !strings.ContainsAny(s, "@:") {
		if asHost && s != "" {
			return []hostHit{{host: s, whole: true}}
		}
		return nil
	}
	var hits []hostHit
	seen := map[string]int{}
	add := func(h string, whole bool) {
		h = strings.TrimRight(h, ".。．｡")
		if h == "" {
			return
		}
		if i, ok := seen[h]; ok {
			hits[i].whole = hits[i].whole || whole
			return
		}
		seen[h] = len(hits)
		hits = append(hits, hostHit{host: h, whole: whole})
	}
	// whole: the string is nothing but one address or one URL.
	single := strings.Count(s, "@") <= 1
	noSpace := strings.IndexFunc(s, unicode.IsSpace) < 0
	isURL := strings.Contains(s, "://")
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '@':
			h := hostRun(s[i+1:])
			if strings.ContainsAny(h, ".。．｡") || asHost {
				add(h, noSpace && single && !isURL && i+1+len(h) == len(s))
			}
		case strings.HasPrefix(s[i:], "://"):
			auth := s[i+3:]
			if j := strings.IndexAny(auth, "/?#\\ \t\n"); j >= 0 {
				auth = auth[:j]
			}
			if j := strings.LastIndexByte(auth, '@'); j >= 0 {
				auth = auth[j+1:]
			}
			if strings.HasPrefix(auth, "[") {
				if j := strings.IndexByte(auth, ']'); j >= 0 {
					auth = auth[1:j]
				}
			} else if j := strings.LastIndexByte(auth, ':'); j >= 0 {
				auth = auth[:j]
			}
			add(auth, noSpace && isScheme(s[:i]))
			i += 2
		}
	}
	return hits
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// hostRun returns the longest prefix of s made of characters that can be
// part of a host name, before IDNA mapping.
func hostRun(s string) string {
	for i, r := range s {
		if !(r == '-' || r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) ||
			r == '。' || r == '．' || r == '｡' || (r >= 0x80 && unicode.Is(unicode.Cf, r))) {
			return s[:i]
		}
	}
	return s
}

// analyzeHost resolves one host name. The error is set only when the name
// is not a valid domain name.
func analyzeHost(h hostHit, trusted []trustedDomain, esc escaper) (domainPart, error) {
	d := domainPart{Written: esc.show(h.host)}
	if ip, err := netip.ParseAddr(h.host); err == nil {
		d.ASCII = ip.String()
		d.Warnings = []string{warnIP}
		return d, nil
	}
	for _, r := range h.host {
		if hiddenKind(r, true) != "" || isBidiControl(r) {
			// IDNA would silently drop some of these (U+200B, U+00AD); a
			// name that changes when mapped is not shown as a domain.
			return d, fmt.Errorf("%w: a domain name holds invisible characters", ErrUnrenderable)
		}
	}
	ascii, err := strictIDNA.ToASCII(h.host)
	if err != nil {
		return d, fmt.Errorf("%w: a domain name fails IDNA conversion", ErrUnrenderable)
	}
	uni, err := strictIDNA.ToUnicode(ascii)
	if err != nil || !utf8.ValidString(uni) {
		return d, fmt.Errorf("%w: a domain name fails IDNA conversion", ErrUnrenderable)
	}
	d.ASCII = ascii
	var warns flagSet
	if reg, err := publicsuffix.EffectiveTLDPlusOne(ascii); err == nil {
		d.Registrable = reg
	} else {
		warns.add(warnNoRegistrable)
	}
	if _, icann := publicsuffix.PublicSuffix(ascii); !icann {
		warns.add(warnUnlistedSuffix)
	}
	showUnicode := true
	var all scriptSet
	for _, label := range strings.Split(uni, ".") {
		var scripts scriptSet
		letters, lookalikes := 0, 0
		for _, r := range label {
			scripts.add(scriptOf(r))
			all.add(scriptOf(r))
			if unicode.IsLetter(r) {
				letters++
				if imitatesLatin(r) {
					lookalikes++
				}
			}
		}
		switch {
		case !scripts.allowedMix():
			warns.add(warnMixedScript)
			showUnicode = false
		case letters > 0 && lookalikes == letters:
			warns.add(warnLookalikeLabel)
			showUnicode = false
		}
	}
	if !showUnicode {
		d.Scripts = all.String()
	}
	if uni != ascii {
		if showUnicode {
			d.Unicode = esc.show(uni).Text
		}
		if strings.Contains(h.host, "xn--") || strings.Contains(h.host, "XN--") {
			warns.add(warnHiddenNonASCII)
		}
	}
	regUni := uni
	if d.Registrable != "" {
		if u, err := strictIDNA.ToUnicode(d.Registrable); err == nil {
			regUni = u
		}
	}
	skel := ""
	for _, t := range trusted {
		if ascii == t.ascii || strings.HasSuffix(ascii, "."+t.ascii) {
			d.Trusted = true
			d.LooksLike = ""
			break
		}
		if d.LooksLike != "" {
			continue
		}
		if skel == "" {
			skel = skeleton(regUni)
		}
		switch {
		case d.Registrable != t.registrable && skel == t.skel:
			d.LooksLike = t.ascii
			warns.add(warnLookalike)
		case d.Registrable != t.registrable && strings.Contains("."+ascii+".", "."+t.registrable+"."):
			d.LooksLike = t.ascii
			warns.add(warnContainsTrusted)
		}
	}
	if d.Trusted {
		warns = flagSet{f: removeAll(warns.f, warnLookalike, warnContainsTrusted)}
	}
	d.Warnings = warns.f
	return d, nil
}

func removeAll(s []string, drop ...string) []string {
	out := s[:0]
	for _, x := range s {
		keep := true
		for _, d := range drop {
			if x == d {
				keep = false
			}
		}
		if keep {
			out = append(out, x)
		}
	}
	return out
}

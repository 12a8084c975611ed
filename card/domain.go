package card

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
)

// Warnings a domain can carry; the views spell them out.
const (
	warnMixedScript     = "mixed-script"      // a label mixes scripts; Unicode form not shown
	warnLookalikeLabel  = "lookalike-label"   // a label written with look-alike characters
	warnLookalike       = "lookalike"         // looks like a trusted domain but is not one
	warnContainsTrusted = "contains-trusted"  // a trusted name inside another registrable domain
	warnNoRegistrable   = "no-registrable"    // the host is a public suffix itself
	warnUnlistedSuffix  = "unlisted-suffix"   // the top-level domain is not a known public suffix
	warnIP              = "ip-address"        // a literal IP address, not a name
	warnInvalid         = "invalid-domain"    // not a valid domain name (only for names inside longer text)
	warnHiddenNonASCII  = "non-ascii-in-name" // the A-label form hides non-ASCII letters
	warnDecoy           = "decoy-before-host" // user info, a quoted local part or a display name before the host holds an @
	warnMentioned       = "mentioned"         // named inside a longer text or beside another host: never trusted
	warnMore            = "more-hosts"        // the value names more hosts than the card analyses
)

func warnText(w string) string {
	switch w {
	case warnMixedScript:
		return "mixes scripts within a label; the Unicode form is not shown"
	case warnLookalikeLabel:
		return "a label has characters that look like others; the Unicode form is not shown"
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
	case warnDecoy:
		return "the text before this host holds an @ or a dot: THIS host is where it goes"
	case warnMentioned:
		return "named in a text that is not one address or URL: never marked trusted"
	case warnMore:
		return "the value names more hosts than these; the rest are not analysed"
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

// prepareTrusted checks and normalizes the trusted domains. A public
// suffix (com, github.io) is refused: trusting it would trust every domain
// registered under it.
func prepareTrusted(list []string) ([]trustedDomain, error) {
	out := make([]trustedDomain, 0, len(list))
	for i, t := range list {
		ascii, err := strictIDNA.ToASCII(strings.TrimSuffix(t, "."))
		if err != nil || ascii == "" {
			return nil, fmt.Errorf("%w: trusted domain %d is not a domain name", ErrBadContext, i)
		}
		if _, err := netip.ParseAddr(ascii); err == nil {
			return nil, fmt.Errorf("%w: trusted domain %d is an IP address", ErrBadContext, i)
		}
		reg, err := publicsuffix.EffectiveTLDPlusOne(ascii)
		if err != nil {
			return nil, fmt.Errorf("%w: trusted domain %d is a public suffix, which would trust every domain under it", ErrBadContext, i)
		}
		uni, err := strictIDNA.ToUnicode(reg)
		if err != nil {
			return nil, fmt.Errorf("%w: trusted domain %d is not a domain name", ErrBadContext, i)
		}
		out = append(out, trustedDomain{ascii: ascii, registrable: reg, skel: skeleton(uni)})
	}
	return out, nil
}

// hosts finds the hosts of a value: the one host of a value that is
// exactly one address, URL or (asHost) host name, and every host it
// mentions besides. Only the one host of a clean value that mentions no
// other may be marked trusted. An error means the value is one address,
// URL or declared host whose name is not a valid domain name.
func (r *renderer) hosts(s string, asHost bool) ([]domainPart, bool, error) {
	if !asHost && !strings.ContainsAny(s, "@:") {
		return nil, false, nil // neither an address nor a URL, nor names one
	}
	whole, one := parseWhole(s, asHost)
	scanned := scanHosts(s)
	if asHost && !one && s != "" {
		return nil, false, fmt.Errorf("%w: an argument declared as a domain does not hold a host name", ErrUnrenderable)
	}
	var out []domainPart
	many := len(scanned) > maxMentioned
	if many {
		scanned = scanned[:maxMentioned]
	}
	others := 0
	for _, h := range scanned {
		if one && sameHost(h, whole.host) {
			continue
		}
		others++
	}
	if one {
		d, err := r.analyze(whole.host, one && whole.clean && others == 0)
		if err != nil {
			return nil, false, err
		}
		if whole.decoy {
			d.Warnings = append(slices.Clip(d.Warnings), warnDecoy)
		}
		out = append(out, d)
	}
	for _, h := range scanned {
		if one && sameHost(h, whole.host) {
			continue
		}
		d, err := r.analyze(strings.Trim(h, "[]"), false)
		if err != nil {
			d.Warnings = []string{warnInvalid}
		}
		d.Warnings = append(slices.Clip(d.Warnings), warnMentioned)
		out = append(out, d)
	}
	notOne := len(scanned) > 0 && (!one || others > 0) || one && !whole.clean || many
	if many {
		out = append(out, domainPart{Written: shown{Text: "..."}, Warnings: []string{warnMore}})
	}
	return out, notOne, nil
}

// skeleton is the UTS #39 skeleton of a domain, lower-cased so that 0 and
// O, which the data maps to each other, also match o.
func skeleton(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.ToLower(confusable.Skeleton(strings.ToLower(s)))
		}
	}
	// ASCII decomposes to itself: map byte by byte.
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if sk, ok := confusable.Lookup(rune(c)); ok {
			b.WriteString(strings.ToLower(sk))
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// registrable returns the registrable domain (eTLD+1) of an A-label host,
// or "" when the host is a public suffix itself, and whether its suffix is
// one ICANN lists; one lookup in the public suffix list.
func registrable(ascii string) (string, bool) {
	suffix, icann := publicsuffix.PublicSuffix(ascii)
	if len(ascii) <= len(suffix) || ascii[len(ascii)-len(suffix)-1] != '.' {
		return "", icann
	}
	rest := ascii[:len(ascii)-len(suffix)-1]
	return rest[strings.LastIndexByte(rest, '.')+1:] + "." + suffix, icann
}

// holdsLabels reports whether the labels of name hold those of part, in
// order, as "mail.example.com.evil.net" holds "example.com".
func holdsLabels(name, part string) bool {
	for from := 0; from <= len(name)-len(part); {
		i := strings.Index(name[from:], part)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(part)
		if (start == 0 || name[start-1] == '.') && (end == len(name) || name[end] == '.') {
			return true
		}
		from = start + 1
	}
	return false
}

// hostKey identifies one analysis of a host within a render.
type hostKey struct {
	host     string
	eligible bool
}

// analyze is analyzeHost, remembered for the rest of the render: an effect
// names the same hosts again and again.
func (r *renderer) analyze(host string, eligible bool) (domainPart, error) {
	k := hostKey{host, eligible}
	if d, ok := r.seen[k]; ok {
		return d, nil
	}
	d, err := analyzeHost(host, eligible, r.trusted, r.esc)
	if err == nil {
		if r.seen == nil {
			r.seen = map[hostKey]domainPart{}
		}
		r.seen[k] = d
	}
	return d, err
}

func sameHost(a, b string) bool {
	return strings.EqualFold(strings.Trim(strings.TrimRight(a, "."), "[]"), strings.Trim(strings.TrimRight(b, "."), "[]"))
}

// endsInNumber reports a host the WHATWG URL parser reads as an IPv4
// address: its last label is a decimal, octal or hex number.
func endsInNumber(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		last = last[2:]
		for i := 0; i < len(last); i++ {
			if !strings.ContainsRune("0123456789abcdefABCDEF", rune(last[i])) {
				return false
			}
		}
		return true
	}
	return isPort(last)
}

// analyzeHost resolves one host name. The error is set only when the name
// is not a valid domain name. eligible says whether the host may be marked
// trusted at all.
func analyzeHost(host string, eligible bool, trusted []trustedDomain, esc escaper) (domainPart, error) {
	d := domainPart{Written: esc.show(host)}
	if ip, err := netip.ParseAddr(host); err == nil {
		d.ASCII = ip.String()
		d.Warnings = []string{warnIP}
		return d, nil
	}
	if endsInNumber(host) {
		d.Warnings = []string{warnIP}
		return d, nil
	}
	for _, r := range host {
		if r >= 0x80 && charclass.Lookup(r).Props&(charclass.Invisible|charclass.Bidi) != 0 {
			// IDNA would silently drop some of these (U+200B, U+00AD); a
			// name that changes when mapped is not shown as a domain.
			return d, fmt.Errorf("%w: a domain name holds invisible characters", ErrUnrenderable)
		}
	}
	ascii, ok := plainHost(host)
	uni := ascii
	if !ok {
		var err error
		ascii, err = strictIDNA.ToASCII(host)
		if err != nil {
			return d, fmt.Errorf("%w: a domain name fails IDNA conversion", ErrUnrenderable)
		}
		uni, err = strictIDNA.ToUnicode(ascii)
		if err != nil || !utf8.ValidString(uni) {
			return d, fmt.Errorf("%w: a domain name fails IDNA conversion", ErrUnrenderable)
		}
	}
	d.ASCII = ascii
	var warns warnSet
	if reg, icann := registrable(ascii); reg != "" {
		d.Registrable = reg
		if !icann {
			warns.add(warnUnlistedSuffix)
		}
	} else {
		warns.add(warnNoRegistrable)
		if !icann {
			warns.add(warnUnlistedSuffix)
		}
	}
	showUnicode := true
	var all scriptSet
	for _, label := range labelsToCheck(uni) {
		var scripts scriptSet
		look := false
		for _, r := range label {
			scripts.add(scriptOf(r))
			all.add(scriptOf(r))
			look = look || r >= 0x80 && lookalike(r)
		}
		switch {
		case !scripts.allowedMix():
			warns.add(warnMixedScript)
			showUnicode = false
		case look:
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
		if strings.Contains(strings.ToLower(host), "xn--") {
			warns.add(warnHiddenNonASCII)
		}
	}
	regUni := uni
	if d.Registrable != "" {
		regUni = d.Registrable
		if strings.Contains(d.Registrable, "xn--") {
			if u, err := strictIDNA.ToUnicode(d.Registrable); err == nil {
				regUni = u
			}
		}
	}
	skel := ""
	for _, t := range trusted {
		if ascii == t.ascii || strings.HasSuffix(ascii, "."+t.ascii) {
			d.Trusted = eligible
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
		case d.Registrable != t.registrable && holdsLabels(ascii, t.registrable):
			d.LooksLike = t.ascii
			warns.add(warnContainsTrusted)
		}
	}
	if d.Trusted {
		warns = warnSet{f: removeAll(warns.f, warnLookalike, warnContainsTrusted)}
	}
	d.Warnings = warns.f
	return d, nil
}

// labelsToCheck returns the labels of a Unicode host name whose scripts
// need checking: none for an ASCII name.
func labelsToCheck(uni string) []string {
	for i := 0; i < len(uni); i++ {
		if uni[i] >= 0x80 {
			return strings.Split(uni, ".")
		}
	}
	return nil
}

// plainHost returns the lower-case form of a host name made only of ASCII
// letters, digits and hyphens in labels of 1 to 63 characters, none
// starting or ending with a hyphen or holding one in its third and fourth
// places (A-labels and reserved labels go through IDNA): for such a name,
// strict IDNA conversion is exactly this, and much cheaper.
func plainHost(h string) (string, bool) {
	if len(h) == 0 || len(h) > 253 {
		return "", false
	}
	lower := true
	label := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if label == 0 || label > 63 || h[i-1] == '-' {
				return "", false
			}
			label = 0
			continue
		}
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			lower = false
		case c == '-':
			if label == 0 || label == 3 && h[i-1] == '-' {
				return "", false
			}
		default:
			return "", false
		}
		label++
	}
	if !lower {
		return strings.ToLower(h), true
	}
	return h, true
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

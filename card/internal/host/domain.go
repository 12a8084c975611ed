// Package host finds the hosts a string names and analyses each: the one
// host of a value that is exactly one e-mail address, URL or declared host
// name, read as mail software and browsers read them, every other host it
// mentions, and for each its A-label form, registrable domain, scripts,
// look-alikes of trusted domains and whether it is trusted.
package host

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/card/internal/charclass"
	"github.com/agentstepup/asu/card/internal/confusable"
	"github.com/agentstepup/asu/card/internal/escape"
)

// Domain is what a host name found in a string resolves to. Its JSON is
// the card format's "domains" member, so the field names are part of the
// card format.
type Domain struct {
	ASCII       string       `json:"ascii"`                 // the authoritative A-label form
	LooksLike   string       `json:"looks_like,omitempty"`  // the trusted domain it imitates
	Registrable string       `json:"registrable,omitempty"` // eTLD+1, A-label form
	Scripts     string       `json:"scripts,omitempty"`     // when mixed, e.g. "Cyrillic+Latin"
	Trusted     bool         `json:"trusted,omitempty"`     // registrable domain is a trusted one
	Unicode     string       `json:"unicode,omitempty"`     // when safe to show
	Warnings    []string     `json:"warnings,omitempty"`
	Written     escape.Shown `json:"written"` // as the argument spells it
}

// Errors of Hosts, which the card reports as unrenderable.
var (
	errNotHost   = errors.New("an argument declared as a domain does not hold a host name")
	errInvisible = errors.New("a domain name holds invisible characters")
	errIDNA      = errors.New("a domain name fails IDNA conversion")
)

// display is how a host is shown: escaped like every string of the card.
var display = escape.Escaper{Quote: true}

// Trusted is an entry of Context.Trusted, normalized once per render.
type Trusted struct {
	ascii       string
	registrable string
	skel        string // skeleton of the registrable domain's Unicode form
	folded      string // the registrable domain's Unicode form, lower case, NFD
	label       string // the registrable domain's first label, A-label form
	labelSkel   string // its skeleton
}

// PrepareTrusted checks and normalizes the trusted domains. A public
// suffix (com, github.io) is refused: trusting it would trust every domain
// registered under it.
func PrepareTrusted(list []string) ([]Trusted, error) {
	out := make([]Trusted, 0, len(list))
	for i, t := range list {
		ascii, err := strictIDNA.ToASCII(strings.TrimSuffix(t, "."))
		if err != nil || ascii == "" {
			return nil, fmt.Errorf("trusted domain %d is not a domain name", i)
		}
		if _, err := netip.ParseAddr(ascii); err == nil {
			return nil, fmt.Errorf("trusted domain %d is an IP address", i)
		}
		reg, err := publicsuffix.EffectiveTLDPlusOne(ascii)
		if err != nil {
			return nil, fmt.Errorf("trusted domain %d is a public suffix, which would trust every domain under it", i)
		}
		uni, err := strictIDNA.ToUnicode(reg)
		if err != nil {
			return nil, fmt.Errorf("trusted domain %d is not a domain name", i)
		}
		label, _, _ := strings.Cut(reg, ".")
		out = append(out, Trusted{ascii: ascii, registrable: reg, skel: skeleton(uni), folded: foldName(uni), label: label, labelSkel: skeleton(label)})
	}
	return out, nil
}

// Analyzer finds and analyses the hosts of the strings of one card,
// remembering the hosts it has analysed: an effect names the same hosts
// again and again. It analyses at most MaxAnalysed hosts; see Hosts.
type Analyzer struct {
	trusted  []Trusted
	seen     map[hostUse]*Domain // every analysis, where Hosts put it
	analysed int                 // analyses done
	scanned  []string            // room for the hosts of one string
	tmp      []Domain            // room for the list of one string
	fresh    []freshAnalysis     // the new analyses in tmp
	slab     []Domain            // room the lists Hosts returns are cut from
	scratch  scratch
}

// freshAnalysis is a new analysis, at tmp[i].
type freshAnalysis struct {
	k hostUse
	i int
}

// MaxAnalysed is how many analyses of hosts (IDNA conversion, public
// suffix list, scripts, look-alikes of trusted domains) one card does:
// each distinct host once for each way a value uses it (the one host of a
// value, with or without a decoy before it, or a host named beside
// others). It bounds the work of a card that names a great many distinct
// hosts; such a card lists the ones analysed, and says of each value
// naming others that its other hosts were not analysed. A host not
// analysed is never marked trusted.
const MaxAnalysed = 4096

// hostUse is a host and how a value uses it: the bits below.
type hostUse struct {
	host string
	use  uint8
}

// The uses of a host, which change its analysis.
const (
	useEligible  uint8 = 1 << iota // the one host of a clean value: may be marked trusted
	useMentioned                   // named beside others: warned, never trusted
	useDecoy                       // an @ or a dot before the one host: warned
	useNoSend                      // the one host of a URL whose scheme sends nothing to it: warned, never trusted
	useRecipient                   // another recipient of a mailto: URI: warned, never trusted
	useRelay                       // the one host of an address whose local part routes it on: warned, never trusted
)

// NewAnalyzer returns an analyzer that marks hosts at or under the trusted
// domains as trusted.
func NewAnalyzer(trusted []Trusted) *Analyzer { return &Analyzer{trusted: trusted} }

// Hosts finds the hosts of a value: the one host of a value that is
// exactly one address, URL or (asHost) host name, and every host it
// mentions besides. Only the one host of a clean value that mentions no
// other may be marked trusted, and only when the value is an address, a
// mailto: URI all of whose recipients are at that host (the others are
// listed, warned WarnRecipient), or a URL whose scheme sends something to
// its host (see sendsToHost; another scheme's host is warned WarnNoSend). An error means the value is one address,
// URL or declared host whose name is not a valid domain name.
//
// Once the analyzer has done MaxAnalysed analyses, a host it has not
// analysed yet is left out of the list, which ends with an entry saying
// so (WarnUnanalysed), and is not checked; in particular an address whose
// domain is not a valid name is not refused then.
func (a *Analyzer) Hosts(s string, asHost bool) ([]Domain, bool, error) {
	if !asHost && !NamesHost(s) {
		return nil, false, nil // neither an address nor a URL, nor names one
	}
	whole, one := parseWhole(s, asHost)
	scanned := appendHosts(a.scanned, s)
	for _, t := range whole.texts {
		scanned = appendMoreHosts(scanned, t)
	}
	for _, h := range whole.relay {
		if len(scanned) <= maxMentioned && !containsHost(scanned, h) {
			scanned = append(scanned, h)
		}
	}
	a.scanned = scanned
	if asHost && !one && s != "" {
		return nil, false, errNotHost
	}
	if !one && len(scanned) == 0 {
		return nil, false, nil
	}
	wholeKey := ""
	if one {
		wholeKey = hostKey(whole.host)
	}
	// A mailto: URI's other recipients are analysed first, as recipients;
	// the hosts found in its text besides them, as mentioned.
	recipients := whole.more
	if len(recipients) > 0 {
		n := 0
		for _, h := range scanned {
			if !containsHost(recipients, h) {
				scanned[n] = h
				n++
			}
		}
		scanned = scanned[:n]
	}
	many := len(recipients)+len(scanned) > maxMentioned
	if len(recipients) > maxMentioned {
		recipients = recipients[:maxMentioned]
	}
	if len(scanned) > maxMentioned-len(recipients) {
		scanned = scanned[:maxMentioned-len(recipients)]
	}
	others := len(recipients)
	for _, h := range scanned {
		if !one || !strings.EqualFold(hostKey(h), wholeKey) {
			others++
		}
	}
	// The list is built in room the analyzer reuses, then copied to a
	// list of its own size, where the new analyses are remembered.
	a.tmp, a.fresh = a.tmp[:0], a.fresh[:0]
	skipped := false
	if one {
		use := uint8(0)
		if whole.clean && others == 0 && !whole.partly && !whole.noSend && !whole.relays {
			use |= useEligible
		}
		if whole.relays {
			use |= useRelay
		}
		if whole.decoy {
			use |= useDecoy
		}
		if whole.noSend {
			use |= useNoSend
		}
		if err := a.analyze(whole.host, use, &skipped); err != nil {
			return nil, false, err
		}
	}
	for _, h := range recipients {
		_ = a.analyze(h, useRecipient, &skipped)
	}
	for _, h := range scanned {
		if one && strings.EqualFold(hostKey(h), wholeKey) {
			continue
		}
		_ = a.analyze(strings.Trim(h, "[]"), useMentioned, &skipped)
	}
	notOne := len(scanned) > 0 && (!one || others > 0) || one && (!whole.clean || others > 0 || whole.partly) || many
	if many {
		a.tmp = append(a.tmp, Domain{Written: escape.Shown{Text: "..."}, Warnings: warningList(WarnMore)})
	}
	if skipped {
		a.tmp = append(a.tmp, Domain{Written: escape.Shown{Text: "..."}, Warnings: warningList(WarnUnanalysed)})
	}
	out := append(a.alloc(len(a.tmp)), a.tmp...)
	clear(a.tmp)
	for _, f := range a.fresh {
		a.seen[f.k] = &out[f.i]
	}
	return out, notOne, nil
}

// hostKey is what of a host name tells it from another, up to case:
// the name without trailing dots and brackets.
func hostKey(h string) string {
	for h != "" && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	for h != "" && (h[0] == '[' || h[0] == ']') {
		h = h[1:]
	}
	for h != "" && (h[len(h)-1] == '[' || h[len(h)-1] == ']') {
		h = h[:len(h)-1]
	}
	return h
}

// alloc returns an empty list with room for n domains, cut from a slab so
// that the many short lists of a card take few allocations. Slabs start
// small and double up to slabSize, so that a card naming a host or two
// does not pay for a hundred.
func (a *Analyzer) alloc(n int) []Domain {
	const slabSize = 128
	if n > slabSize/4 {
		return make([]Domain, 0, n)
	}
	if cap(a.slab)-len(a.slab) < n {
		a.slab = make([]Domain, 0, max(n, min(2*cap(a.slab), slabSize), 8))
	}
	out := a.slab[len(a.slab) : len(a.slab) : len(a.slab)+n]
	a.slab = a.slab[:len(a.slab)+n]
	return out
}

// skeleton is the UTS #39 skeleton of a domain, lower-cased so that 0 and
// O, which the data maps to each other, also match o.
func skeleton(s string) string { return string(appendSkeleton(nil, s, &scratch{})) }

// scratch is room analyzeHost and appendSkeleton reuse, with a normalizer:
// norm's Append and String allocate one for each call.
type scratch struct {
	nfd, mapped, skel []byte
	iter              norm.Iter
	all, label        escape.ScriptSet // for analyzeHost
	pieces            map[rune]skelPiece
}

// skelPiece is what one character contributes to a skeleton when it
// stands alone; alone says that it contributes the same wherever it
// stands (see appendSkeleton).
type skelPiece struct {
	s     string
	alone bool
}

// maxPieces bounds scratch.pieces: a name of more distinct characters
// than that takes the general path.
const maxPieces = 4096

// appendNFD appends the NFD form of s to dst.
func (sc *scratch) appendNFD(dst []byte, s string) []byte {
	sc.iter.InitString(norm.NFD, s)
	for !sc.iter.Done() {
		dst = append(dst, sc.iter.Next()...)
	}
	return dst
}

// appendSkeleton appends skeleton(s) to dst, using sc for room.
func appendSkeleton(dst []byte, s string, sc *scratch) []byte {
	if !nonASCII(s) {
		// ASCII decomposes to itself: map byte by byte.
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if sk, ok := confusable.Lookup(rune(c)); ok {
				dst = appendLower(dst, sk)
			} else {
				dst = append(dst, c)
			}
		}
		return dst
	}
	// The skeleton is a concatenation of each character's own when no
	// step can reorder marks across characters: normalization only
	// reorders runs of combining marks (canonical combining class other
	// than 0), so when each character's decomposition, and each
	// decomposition's mapping, starts with a character of class 0 (or
	// maps to nothing), every run stays within the part of one character.
	n := len(dst)
	for _, r := range s {
		p, ok := sc.pieces[r]
		if !ok {
			p = sc.piece(r)
			if len(sc.pieces) < maxPieces {
				if sc.pieces == nil {
					sc.pieces = map[rune]skelPiece{}
				}
				sc.pieces[r] = p
			}
		}
		if !p.alone {
			return appendSkeletonSlow(dst[:n], s, sc)
		}
		dst = append(dst, p.s...)
	}
	return dst
}

// piece computes skelPiece of r.
func (sc *scratch) piece(r rune) skelPiece {
	one := string(r)
	sc.nfd = sc.appendNFD(sc.nfd[:0], strings.ToLower(one))
	alone := norm.NFD.Properties(sc.nfd).CCC() == 0
	sc.mapped = sc.mapped[:0]
	for _, q := range string(sc.nfd) {
		if sk, ok := confusable.Lookup(q); ok {
			sc.mapped = append(sc.mapped, sk...)
		} else {
			sc.mapped = utf8.AppendRune(sc.mapped, q)
		}
	}
	sc.nfd = sc.appendNFD(sc.nfd[:0], string(sc.mapped))
	alone = alone && (len(sc.nfd) == 0 || norm.NFD.Properties(sc.nfd).CCC() == 0)
	return skelPiece{s: string(appendLower(nil, string(sc.nfd))), alone: alone}
}

// appendSkeletonSlow appends skeleton(s) to dst, s as a whole:
// strings.ToLower(confusable.Skeleton(strings.ToLower(s))), without a
// string for each step.
func appendSkeletonSlow(dst []byte, s string, sc *scratch) []byte {
	sc.nfd = sc.appendNFD(sc.nfd[:0], strings.ToLower(s))
	sc.mapped = sc.mapped[:0]
	for _, r := range string(sc.nfd) {
		if sk, ok := confusable.Lookup(r); ok {
			sc.mapped = append(sc.mapped, sk...)
		} else {
			sc.mapped = utf8.AppendRune(sc.mapped, r)
		}
	}
	sc.nfd = sc.appendNFD(sc.nfd[:0], string(sc.mapped))
	return appendLower(dst, string(sc.nfd))
}

// appendLower appends strings.ToLower(s) to dst.
func appendLower(dst []byte, s string) []byte {
	for _, r := range s {
		if r < 0x80 {
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// isSubdomain reports whether name is under domain.
func isSubdomain(name, domain string) bool {
	return len(name) > len(domain) && name[len(name)-len(domain)-1] == '.' && strings.HasSuffix(name, domain)
}

// parseIP is netip.ParseAddr for what can be an IP address: a name with a
// character other than digits and dots and without a colon is not, and is
// refused without the error value netip would make.
func parseIP(s string) (netip.Addr, error) {
	if !strings.Contains(s, ":") {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c != '.' && (c < '0' || c > '9') {
				return netip.Addr{}, errNotIP
			}
		}
	}
	return netip.ParseAddr(s)
}

var errNotIP = errors.New("not an IP address")

// registrable returns the registrable domain (eTLD+1) of an A-label host,
// or "" when the host is a public suffix itself, and whether its suffix is
// one ICANN lists; one lookup in the public suffix list.
func registrable(ascii string) (string, bool) {
	suffix, icann := publicsuffix.PublicSuffix(ascii)
	if len(ascii) <= len(suffix) || ascii[len(ascii)-len(suffix)-1] != '.' {
		return "", icann
	}
	rest := ascii[:len(ascii)-len(suffix)-1]
	return ascii[strings.LastIndexByte(rest, '.')+1:], icann
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

// analyze appends analyzeHost of host, for a use of it, to a.tmp, and
// notes it in a.fresh when it is new: Hosts remembers it, where the list
// it returns holds it (it never changes that list), for the rest of the
// render. A mentioned host that is not a valid domain name is warned so,
// not refused. Once the analyzer has done MaxAnalysed analyses, a host
// not analysed yet is not, and skipped is set.
func (a *Analyzer) analyze(host string, use uint8, skipped *bool) error {
	k := hostUse{host, use}
	if d, ok := a.seen[k]; ok {
		a.tmp = append(a.tmp, *d)
		return nil
	}
	if a.analysed >= MaxAnalysed {
		*skipped = true
		return nil
	}
	a.analysed++
	d, err := analyzeHost(host, use&useEligible != 0, a.trusted, &a.scratch)
	if use&(useMentioned|useRecipient) != 0 {
		if err != nil {
			d.Warnings, err = warningList(WarnInvalid), nil
		}
		if use&useMentioned != 0 {
			d.Warnings = withWarning(d.Warnings, WarnMentioned)
		} else {
			d.Warnings = withWarning(d.Warnings, WarnRecipient)
		}
	}
	if use&useNoSend != 0 && err == nil {
		d.Warnings = withWarning(d.Warnings, WarnNoSend)
	}
	if err != nil {
		return err
	}
	if use&useDecoy != 0 {
		d.Warnings = withWarning(d.Warnings, WarnDecoy)
	}
	if use&useRelay != 0 {
		d.Warnings = withWarning(d.Warnings, WarnRelay)
	}
	if a.seen == nil {
		a.seen = map[hostUse]*Domain{}
	}
	a.fresh = append(a.fresh, freshAnalysis{k, len(a.tmp)})
	a.tmp = append(a.tmp, d)
	return nil
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
	return isDigits(last)
}

// analyzeHost resolves one host name. The error is set only when the name
// is not a valid domain name. eligible says whether the host may be marked
// trusted at all.
func analyzeHost(host string, eligible bool, trusted []Trusted, scratch *scratch) (Domain, error) {
	d := Domain{Written: display.Show(host)}
	if ip, err := parseIP(host); err == nil {
		d.ASCII = ip.String()
		d.Warnings = warningList(WarnIP)
		return d, nil
	}
	if endsInNumber(host) {
		d.Warnings = warningList(WarnIP)
		return d, nil
	}
	for _, r := range host {
		if r >= 0x80 && charclass.Lookup(r).Props&(charclass.Invisible|charclass.Bidi) != 0 {
			// IDNA would silently drop some of these (U+200B, U+00AD); a
			// name that changes when mapped is not shown as a domain.
			return d, errInvisible
		}
	}
	// One dot at the end names the DNS root: "example.com." is
	// example.com, and is looked up and compared as it. The written form
	// keeps the dot; more dots at the end are empty labels, which no name
	// resolves through: warned, and never trusted.
	name, tail := rootName(host)
	var warns warnSet
	if len(tail) > 1 || name == "" {
		warns.add(WarnEmptyLabel)
		eligible = false
		if name == "" {
			d.ASCII = host
			d.Warnings = warns.list()
			return d, nil
		}
	}
	ascii, ok := plainHost(name)
	uni := ascii
	fast := !ok
	if !ok {
		ascii, uni, ok = fastIDNA(name)
	}
	if !ok {
		fast = false
		var err error
		ascii, err = strictIDNA.ToASCII(name)
		if err != nil || ascii == "" || strings.HasSuffix(ascii, ".") {
			return d, errIDNA
		}
		uni, err = strictIDNA.ToUnicode(ascii)
		if err != nil || !utf8.ValidString(uni) {
			return d, errIDNA
		}
	}
	d.ASCII = ascii + tail
	if reg, icann := registrable(ascii); reg != "" {
		d.Registrable = reg
		if !icann {
			warns.add(WarnUnlistedSuffix)
		}
	} else {
		warns.add(WarnNoRegistrable)
		if !icann {
			warns.add(WarnUnlistedSuffix)
		}
	}
	showUnicode := true
	all := scratch.all[:0]
	for label, rest := "", uni; nonASCII(uni) && rest != ""; {
		label, rest, _ = strings.Cut(rest, ".")
		scripts := scratch.label[:0]
		look, latinLike := false, false
		last := ""
		for _, r := range label {
			if sc := escape.ScriptOf(r); sc != last {
				scripts.Add(sc)
				all.Add(sc)
				last = sc
			}
			look = look || r >= 0x80 && escape.Lookalike(r)
			latinLike = latinLike || r >= 0x80 && escape.LatinLike(r)
		}
		// Small capitals, and Han and kana drawn as strokes (丨, ー, ノ),
		// read as Latin letters and dashes among Latin ones.
		look = look || latinLike && slices.Contains(scripts, "Latin")
		switch {
		case !scripts.AllowedMix():
			warns.add(WarnMixedScript)
			showUnicode = false
		case look:
			warns.add(WarnLookalikeLabel)
			showUnicode = false
		}
		scratch.label = scripts
	}
	scratch.all = all
	if !showUnicode {
		d.Scripts = all.String()
	}
	if uni != ascii {
		if showUnicode {
			if uni+tail == host {
				d.Unicode = d.Written.Text // already shown
			} else {
				d.Unicode = display.Show(uni + tail).Text
			}
		}
		if strings.Contains(strings.ToLower(name), "xn--") {
			warns.add(WarnHiddenNonASCII)
		}
	}
	regUni := uni
	if d.Registrable != "" {
		regUni = d.Registrable
		if fast {
			// The fast path's Unicode form has the A-label form's labels.
			regUni = lastLabels(uni, strings.Count(d.Registrable, ".")+1)
		} else if strings.Contains(d.Registrable, "xn--") {
			if u, err := strictIDNA.ToUnicode(d.Registrable); err == nil {
				regUni = u
			}
		}
	}
	var skel []byte
	for _, t := range trusted {
		if ascii == t.ascii || isSubdomain(ascii, t.ascii) {
			d.Trusted = eligible
			d.LooksLike = ""
			break
		}
		if d.LooksLike != "" {
			continue
		}
		if skel == nil {
			skel = appendSkeleton(scratch.skel[:0], regUni, scratch)
			scratch.skel = skel
		}
		switch {
		case d.Registrable != t.registrable && string(skel) == t.skel:
			d.LooksLike = t.ascii
			warns.add(WarnLookalike)
		case d.Registrable != t.registrable && holdsLabels(ascii, t.registrable):
			d.LooksLike = t.ascii
			warns.add(WarnContainsTrusted)
		case d.Registrable != "" && d.Registrable != t.registrable && (nearMiss(string(skel), t.skel) || nearMiss(foldName(regUni), t.folded)):
			d.LooksLike = t.ascii
			warns.add(WarnNearMiss)
		}
	}
	if d.Trusted {
		warns.remove(WarnLookalike, WarnContainsTrusted, WarnNearMiss)
	}
	d.Warnings = warns.list()
	return d, nil
}

// nonASCII reports whether s holds a character other than ASCII.
func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// lastLabels returns the last n labels of a host name.
func lastLabels(h string, n int) string {
	i := len(h)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(h[:i], '.')
	}
	return h[i+1:]
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

package host

import (
	"slices"
	"sync"
)

// Warnings a domain can carry; the views spell them out with WarnText.
const (
	WarnMixedScript     = "mixed-script"      // a label mixes scripts; Unicode form not shown
	WarnLookalikeLabel  = "lookalike-label"   // a label written with look-alike characters
	WarnLookalike       = "lookalike"         // looks like a trusted domain but is not one
	WarnContainsTrusted = "contains-trusted"  // a trusted name inside another registrable domain
	WarnNoRegistrable   = "no-registrable"    // the host is a public suffix itself
	WarnUnlistedSuffix  = "unlisted-suffix"   // the top-level domain is not a known public suffix
	WarnIP              = "ip-address"        // a literal IP address, not a name
	WarnInvalid         = "invalid-domain"    // not a valid domain name (only for names inside longer text)
	WarnHiddenNonASCII  = "non-ascii-in-name" // the A-label form hides non-ASCII letters
	WarnDecoy           = "decoy-before-host" // user info, a quoted local part or a display name before the host holds an @
	WarnMentioned       = "mentioned"         // named inside a longer text or beside another host: never trusted
	WarnMore            = "more-hosts"        // the value names more hosts than the card analyses
	WarnUnanalysed      = "not-analysed"      // the card analysed as many hosts as it does: the value's others are not
	WarnNoSend          = "scheme-sends-not"  // the URL's scheme sends nothing to this host: never trusted
	WarnRecipient       = "other-recipient"   // another recipient of a mailto: URI: never trusted
	WarnEmptyLabel      = "empty-label"       // more than one dot at the end, or nothing but dots: never trusted
	WarnNearMiss        = "near-miss"         // one character away from a trusted domain
	WarnRelay           = "relay-local-part"  // the local part routes the mail on (%, ! or @ in it): never trusted
)

// WarnText is what the views say for each warning.
func WarnText(w string) string {
	switch w {
	case WarnMixedScript:
		return "mixes scripts within a label; the Unicode form is not shown"
	case WarnLookalikeLabel:
		return "a label has characters that look like others; the Unicode form is not shown"
	case WarnLookalike:
		return "LOOKS LIKE a trusted domain but is a different one"
	case WarnContainsTrusted:
		return "contains a trusted domain's name but belongs to a different registrable domain"
	case WarnNoRegistrable:
		return "is a public suffix: no registrable domain"
	case WarnUnlistedSuffix:
		return "its top-level domain is not a known public suffix"
	case WarnIP:
		return "is an IP address, not a domain name"
	case WarnInvalid:
		return "is not a valid domain name"
	case WarnHiddenNonASCII:
		return "is written in A-label (xn--) form of non-ASCII letters"
	case WarnDecoy:
		return "the text before this host holds an @ or a dot: THIS host is where it goes"
	case WarnMentioned:
		return "named in a text that is not one address or URL: never marked trusted"
	case WarnMore:
		return "the value names more hosts than these; the rest are not analysed"
	case WarnNoSend:
		return "the URL's scheme sends nothing to this host (only http, https, ws, wss, ftp and mail do): never marked trusted"
	case WarnRecipient:
		return "another recipient of the same mail: a mail to more than one host is never marked trusted"
	case WarnEmptyLabel:
		return "has an empty label (more than one dot at its end): no such name resolves; never marked trusted"
	case WarnNearMiss:
		return "LOOKS LIKE a trusted domain: one character differs"
	case WarnRelay:
		return "the part before @ routes the mail on to another host (a %, ! or @ in it): never marked trusted"
	case WarnUnanalysed:
		return "the card names more distinct hosts than it analyses (4096); this value's other hosts are not analysed, not checked and never marked trusted"
	}
	return w
}

// allWarnings are the warnings a domain can carry, each with its index
// plus one as its code in a list's key.
var allWarnings = [...]string{
	WarnMixedScript, WarnLookalikeLabel, WarnLookalike, WarnContainsTrusted, WarnNoRegistrable, WarnUnlistedSuffix,
	WarnIP, WarnInvalid, WarnHiddenNonASCII, WarnDecoy, WarnMentioned, WarnMore, WarnUnanalysed,
	WarnNoSend, WarnRecipient, WarnEmptyLabel, WarnNearMiss, WarnRelay,
}

// A warning's code must fit the five bits warningList gives it.
var _ [31 - len(allWarnings)]struct{}

func warningCode(w string) uint64 {
	for i, g := range allWarnings {
		if g == w {
			return uint64(i + 1)
		}
	}
	return 0
}

// warnSet collects domain warnings without duplicates, in the order found.
type warnSet struct {
	f [len(allWarnings)]string
	n int
}

func (s *warnSet) add(w string) {
	for _, g := range s.f[:s.n] {
		if g == w {
			return
		}
	}
	if s.n < len(s.f) {
		s.f[s.n] = w
		s.n++
	}
}

// remove drops the given warnings, keeping the order of the rest.
func (s *warnSet) remove(drop ...string) {
	n := 0
	for _, w := range s.f[:s.n] {
		keep := true
		for _, d := range drop {
			keep = keep && w != d
		}
		if keep {
			s.f[n] = w
			n++
		}
	}
	s.n = n
}

// list returns the warnings as a shared list; see warningList.
func (s *warnSet) list() []string { return warningList(s.f[:s.n]...) }

// withWarning returns list with w added at its end.
func withWarning(list []string, w string) []string {
	var s warnSet
	for _, g := range list {
		s.add(g)
	}
	s.add(w)
	return s.list()
}

// warningList returns a list of these warnings, in this order, shared with
// every domain that has the same list (nothing writes to them), so that
// the many hosts of a card with the same warnings share one list. An
// empty list is nil.
func warningList(ws ...string) []string {
	if len(ws) == 0 {
		return nil
	}
	var key uint64
	for i, w := range ws {
		c := warningCode(w)
		if c == 0 || i >= 12 {
			return append([]string(nil), ws...) // not a known warning: not shared
		}
		key |= c << (5 * i)
	}
	lists.RLock()
	l, ok := lists.m[key]
	lists.RUnlock()
	if ok {
		return l
	}
	l = slices.Clip(append([]string(nil), ws...))
	lists.Lock()
	if len(lists.m) < maxLists {
		lists.m[key] = l
	}
	lists.Unlock()
	return l
}

// lists holds the lists warningList made, up to maxLists of them.
var lists = struct {
	sync.RWMutex
	m map[uint64][]string
}{m: map[uint64][]string{}}

const maxLists = 1024

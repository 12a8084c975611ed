package grant

import "strings"

// domainOf returns the domain of an e-mail address ("local@domain") or a
// host name, lower-cased, or false when s is neither in the plain form a
// grant can vouch for. The grammar is deliberately narrow: one "@", a
// dot-atom local part without "%" or "!", an ASCII host name. Anything else
// (a display name, a list of addresses, a quoted local part, a comment, a
// trailing dot, non-ASCII) is refused rather than guessed at, since
// "a@b.com, c@evil.com" read by its last "@" would pass for b.com's
// neighbour. "%" and "!" route mail on through the named domain to another
// ("a%evil.com@example.com", "evil.com!a@example.com": the percent hack and
// UUCP bang paths), so an address with them is not one example.com keeps.
func domainOf(s string) (string, bool) {
	host := s
	if at := strings.IndexByte(s, '@'); at >= 0 {
		local := s[:at]
		host = s[at+1:]
		if !dotAtom(local) || strings.ContainsAny(local, "%!") {
			return "", false
		}
	}
	if !hostName(host) {
		return "", false
	}
	return lower(host), true
}

// dotAtom reports whether s is an RFC 5322 dot-atom of at most 64 bytes.
func dotAtom(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '.' || strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0) {
			return false
		}
	}
	return true
}

// hostName reports whether s is an ASCII host name: dot-separated labels of
// 1 to 63 letters, digits and inner hyphens, at most 253 bytes.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lower lower-cases ASCII letters only.
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

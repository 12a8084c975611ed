package grant

import "strings"

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeToken escapes one reference token (RFC 6901 section 3).
func escapeToken(s string) string { return tokenEscaper.Replace(s) }

// validPointer reports whether p is a JSON pointer: empty, or "/"-prefixed
// tokens in which "~" is always followed by "0" or "1".
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// ancestors calls fn with every proper ancestor pointer of p, "" first.
func ancestors(p string, fn func(string) bool) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && !fn(p[:i]) {
			return false
		}
	}
	return true
}

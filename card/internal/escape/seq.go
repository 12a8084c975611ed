package escape

import "unicode/utf8"

// End returns the end of the escape sequence starting at s[i], a
// backslash.
func End(s string, i int) int {
	j := i + 2
	if s[i+1] == 'u' || s[i+1] == '{' {
		for j < len(s) && s[j-1] != '}' {
			j++
		}
	}
	return j
}

// Cut returns the first n runes of escaped text, never cutting an escape
// sequence in two.
func Cut(s string, n int) string {
	count := 0
	for i := 0; i < len(s); {
		if count >= n {
			return s[:i]
		}
		if s[i] == '\\' && i+1 < len(s) {
			j := End(s, i)
			count += j - i
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s
}

// AddFlag adds f to a flag list, keeping display order.
func AddFlag(list []string, f string) []string {
	var s flagSet
	for _, g := range list {
		s.add(g)
	}
	s.add(f)
	return s.list()
}

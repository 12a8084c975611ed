// Package respell generates the spellings of a URL path that a client, a
// crafted link or a proxy may write for it, for tests that hold a handler
// to every spelling: a router cleans or redirects most of them itself.
package respell

import "strings"

// Paths returns each of paths as written and respelled: a slash doubled
// before each segment, a "." or "x/.." segment inserted, a trailing slash
// added or dropped, a leading slash doubled. Each spelling appears once,
// in the order first made.
func Paths(paths ...string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, b := range paths {
		add(b)
		add("/" + b)
		add(strings.TrimSuffix(b, "/") + "/")
		if b != "/" {
			add(strings.TrimSuffix(b, "/"))
		}
		for i := range len(b) {
			if b[i] == '/' {
				add(b[:i] + "/" + b[i:])
				add(b[:i] + "/." + b[i:])
				add(b[:i] + "/x/.." + b[i:])
			}
		}
	}
	return out
}

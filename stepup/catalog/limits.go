package catalog

import "github.com/agentstepup/asu/canon"

// maxArgsBytes denies calls whose canonical arguments exceed n bytes.
func maxArgsBytes(n int) func(canon.Value) string {
	return func(args canon.Value) string {
		if len(args.Canonical()) > n {
			return "arguments larger than the catalog allows"
		}
		return ""
	}
}

// maxLength denies calls whose string argument arg exceeds n bytes.
func maxLength(arg string, n int) func(canon.Value) string {
	return func(args canon.Value) string {
		v, ok := args.Get(arg)
		if !ok {
			return ""
		}
		if v.Kind() != canon.KindString {
			return "argument " + arg + " is not a string"
		}
		if len(v.String()) > n {
			return "argument " + arg + " longer than the catalog allows"
		}
		return ""
	}
}

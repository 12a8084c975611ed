package asu_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apache20Digest is the SHA-256 of the Apache License 2.0 text as
// published (https://www.apache.org/licenses/LICENSE-2.0.txt), appendix
// included with its "Copyright [yyyy] [name of copyright owner]"
// placeholder, after normalizeLicense.
const apache20Digest = "0ffddef9e48f8a09aed5caf2d44f7ba1c1be2d9b8e0a6f693b1635b2d5566645"

// licenseFiles are the LICENSE files of every unit a user can depend on:
// the root module, the adapters module and the Node interop package.
var licenseFiles = []string{"LICENSE", "adapters/LICENSE", "receipt/interop/LICENSE"}

// copyrightLine is the filled-in appendix notice; it is the one line that
// may differ from the published text.
var copyrightLine = regexp.MustCompile(`(?m)^[ \t]*Copyright [0-9]{4}(-[0-9]{4})? The asu authors[ \t]*$`)

// normalizeLicense puts the appendix placeholder back in place of the
// filled-in notice and collapses every run of white space, so line
// wrapping and indentation do not matter and every word does.
func normalizeLicense(text string) string {
	text = copyrightLine.ReplaceAllString(text, "Copyright [yyyy] [name of copyright owner]")
	return strings.Join(strings.Fields(text), " ")
}

// isApache20 reports whether text is the Apache License 2.0 with asu's
// copyright notice.
func isApache20(text string) bool {
	if len(copyrightLine.FindAllStringIndex(text, -1)) != 1 {
		return false
	}
	sum := sha256.Sum256([]byte(normalizeLicense(text)))
	return hex.EncodeToString(sum[:]) == apache20Digest
}

func TestLicenseFilesAreApache20(t *testing.T) {
	for _, path := range licenseFiles {
		t.Run(path, func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err, "every module and package carries a LICENSE")
			text := string(b)
			assert.True(t, isApache20(text), "%s is not the Apache-2.0 text with the asu authors' notice", path)
			for _, key := range []string{
				"Apache License\n                           Version 2.0, January 2004",
				"3. Grant of Patent License.",
				"END OF TERMS AND CONDITIONS",
				"Copyright 2026 The asu authors",
			} {
				assert.Contains(t, text, key)
			}
		})
	}
}

func TestLicenseCheckRefusesOtherTexts(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	require.NoError(t, err)
	text := string(b)
	require.True(t, isApache20(text))
	for name, edit := range map[string]func(string) string{
		"a word changed":        func(s string) string { return strings.Replace(s, "irrevocable", "revocable", 1) },
		"patent grant removed":  func(s string) string { return cutSection(s, "3. Grant of Patent License.", "4. Redistribution.") },
		"other copyright owner": func(s string) string { return strings.Replace(s, "The asu authors", "Someone Else", 1) },
		"notice not filled in": func(s string) string {
			return copyrightLine.ReplaceAllString(s, "   Copyright [yyyy] [name of copyright owner]")
		},
		"text appended": func(s string) string { return s + "\nAdditional terms apply.\n" },
		"empty":         func(string) string { return "" },
	} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, isApache20(edit(text)))
		})
	}
	t.Run("rewrapped", func(t *testing.T) {
		assert.True(t, isApache20(strings.ReplaceAll(text, "\n", "\n\n  ")), "line wrapping is not part of the text")
	})
}

func cutSection(s, from, to string) string {
	i, j := strings.Index(s, from), strings.Index(s, to)
	if i < 0 || j < i {
		return s
	}
	return s[:i] + s[j:]
}

func TestInteropPackageDeclaresLicense(t *testing.T) {
	for _, path := range []string{"receipt/interop/package.json", "receipt/interop/package-lock.json"} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var pkg struct {
			License  string `json:"license"`
			Packages map[string]struct {
				License string `json:"license"`
			} `json:"packages"`
		}
		require.NoError(t, json.Unmarshal(b, &pkg), path)
		if strings.HasSuffix(path, "lock.json") {
			assert.Equal(t, "Apache-2.0", pkg.Packages[""].License, path)
		} else {
			assert.Equal(t, "Apache-2.0", pkg.License, "%s: SPDX identifier", path)
		}
	}
}

package apiguard_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/internal/apiguard"
)

// FuzzParse feeds arbitrary snapshot files and changelogs to the guard's
// readers: they never panic, a snapshot Parse accepts renders back to the
// same bytes, and the changelog check answers for any text.
func FuzzParse(f *testing.F) {
	f.Add(string(apiguard.Render([]string{"pkg a, func F()", "pkg a, type I interface"})), "## [Unreleased]\n### Breaking\n")
	f.Add("# x\n# digest: 0\n", "## Unreleased\n## [0.1.0]\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, snapshot, changelog string) {
		lines, err := apiguard.Parse([]byte(snapshot))
		if err == nil {
			require.True(t, slices.IsSorted(lines))
			assert.Equal(t, snapshot, string(apiguard.Render(lines)))
		} else {
			assert.ErrorIs(t, err, apiguard.ErrSnapshot)
		}
		released := strings.Split(changelog, "\n")
		slices.Sort(released)
		_ = apiguard.CheckChangelog([]byte(changelog), slices.Compact(released), lines)
		section, ok := apiguard.Unreleased([]byte(changelog))
		if ok {
			assert.Contains(t, changelog, section)
		}
	})
}

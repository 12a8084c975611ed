package card_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden compares every view of the seed examples with files a person
// has read. Regenerate with: go test ./card -run TestGolden -update
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		e    canon.Effect
		ctx  card.Context
	}{
		{"send_email", sendEmailEffect(t, "finance@example.com"), sendEmailContext()},
		{"send_email_lookalike", sendEmailEffect(t, "finance@exarnple.com"), sendEmailContext()},
		{"issue_refund", refundEffect(), refundContext()},
		{"write_file_target", writeFileEffect("~/reports/q3.csv", "/srv/files/reports/q3.csv", 13), writeFileContext()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustRender(t, tc.e, tc.ctx)
			js, err := c.JSON()
			require.NoError(t, err)
			views := map[string]string{
				".txt.golden":  c.Text(),
				".html.golden": string(c.HTML()),
				".json.golden": string(js) + "\n",
				".hash.golden": c.Hash().String() + "\n",
			}
			for ext, got := range views {
				path := filepath.Join("testdata", tc.name+ext)
				if *update {
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "missing golden file; run go test -run TestGolden -update")
				assert.Equal(t, string(want), got, "%s differs from the golden file", path)
			}
		})
	}
}

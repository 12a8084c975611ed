package gate_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store/sqlite"
)

// BenchmarkWatermarkCycle is an allowed call proposed and executed on
// SQLite, with and without the watermark, as sub-benchmarks of one run
// (use -count to interleave them). The difference is the watermark's own
// cost: one chain check and one synced append before each run.
func BenchmarkWatermarkCycle(b *testing.B) {
	for _, marked := range []bool{false, true} {
		b.Run(fmt.Sprintf("watermark=%v", marked), func(b *testing.B) {
			dir := b.TempDir()
			st, err := sqlite.Open(b.Context(), filepath.Join(dir, "asu.db"), nil)
			require.NoError(b, err)
			defer st.Close()
			opts := []gate.Option{gate.WithKey([]byte("the gate key of the watermark bench")),
				gate.WithExecutor("write_draft", &stepuptest.Recorder{})}
			if marked {
				f, err := watermark.OpenFile(filepath.Join(dir, "asu.mark"))
				require.NoError(b, err)
				defer f.Close()
				opts = append(opts, gate.WithWatermark(f))
			}
			g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), append(opts, gate.WithoutFloodControlUnsafe())...)
			require.NoError(b, err)
			b.ResetTimer()
			for i := range b.N {
				tk, err := g.Propose(b.Context(), stepup.Call{Tool: "write_draft", Args: []byte(`{"to":"finance@example.com"}`),
					Session: fmt.Sprint("s-", i), Principal: agentFor("user:dana")})
				if err != nil || tk.Status != stepup.StatusAllowed {
					b.Fatal(err, tk.Status)
				}
				if _, err := g.Execute(b.Context(), tk.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

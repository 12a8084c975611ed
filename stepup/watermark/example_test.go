package watermark_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store/sqlite"
)

// A gate on SQLite keeps its watermark in a file beside the service. After
// the database file is restored from a backup, the gate refuses until an
// operator reconciles.
func ExampleOpenFile() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "asu")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	marks, err := watermark.OpenFile(filepath.Join(dir, "asu.mark")) // keep it off the database's disk and backups
	if err != nil {
		log.Fatal(err)
	}
	defer marks.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithKey([]byte("a key of at least 32 bytes from a secret store")), gate.WithWatermark(marks))
	if err != nil {
		log.Fatal(err)
	}
	found, err := g.Admin().Watermark(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("store behind its mark: %v\n", found.Found != "")
	// Output: store behind its mark: false
}

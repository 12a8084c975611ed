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

// Two replicas of one store each keep a file and read the other's as a
// peer when they start: the second starts from a copy of the first's, so
// it knows what the first saw.
func ExamplePeer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "asu")
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "asu.db")
	key := gate.WithKey([]byte("a key of at least 32 bytes from a secret store"))
	replica := func(own, peer string) (*gate.Gate, func()) {
		st, err := sqlite.Open(ctx, db, nil)
		if err != nil {
			log.Fatal(err)
		}
		marks, err := watermark.OpenFile(own)
		if err != nil {
			log.Fatal(err)
		}
		g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), key,
			gate.WithWatermark(marks, watermark.Peer(peer)))
		if err != nil {
			log.Fatal(err)
		}
		return g, func() { marks.Close(); st.Close() }
	}
	a, b := filepath.Join(dir, "asu.db.a.mark"), filepath.Join(dir, "asu.db.b.mark")
	ga, stopA := replica(a, b) // b has not run yet: a missing peer holds no marks
	defer stopA()
	if _, err := ga.Admin().Watermark(ctx); err != nil { // a writes its mark
		log.Fatal(err)
	}
	mark, err := os.ReadFile(a) // the second replica starts from a copy
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(b, mark, 0o600); err != nil {
		log.Fatal(err)
	}
	gb, stopB := replica(b, a)
	defer stopB()
	found, err := gb.Admin().Watermark(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("store behind the marks: %v\n", found.Found != "")
	// Output: store behind the marks: false
}

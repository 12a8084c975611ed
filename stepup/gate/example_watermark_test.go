package gate_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/stepup/watermark"
	"github.com/agentstepup/asu/store/sqlite"
)

// After the store went back (here its clock was stepped back an hour; a
// restored backup looks the same), the gate refuses until an operator has
// reviewed the store and reconciled it. The approval made before is held:
// it never runs.
func ExampleAdmin_Reconcile() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "asu")
	defer os.RemoveAll(dir)
	clock := stepuptest.NewClock(stepuptest.Start())
	st, err := sqlite.Open(ctx, filepath.Join(dir, "asu.db"), &sqlite.Options{Clock: clock.Now})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	marks, err := watermark.OpenFile(filepath.Join(dir, "asu.mark"))
	if err != nil {
		log.Fatal(err)
	}
	defer marks.Close()
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithDwell(0),
		gate.WithKey([]byte("a key of at least 32 bytes from a secret store")), gate.WithWatermark(marks))
	if err != nil {
		log.Fatal(err)
	}
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	if err != nil {
		log.Fatal(err)
	}
	tk, _ := g.Propose(ctx, exampleCall("finance@example.com"))
	tk, _ = stepuptest.Approve(ctx, g.Desk(), dana, tk.ID)

	clock.Advance(-time.Hour)
	_, err = g.Execute(ctx, tk.ID)
	fmt.Println("held:", errors.Is(err, stepup.ErrRolledBack))

	rec, err := g.Admin().Reconcile(ctx, "user:ops")
	fmt.Println(rec.Found, len(rec.Held), rec.Held[0].Was, err)
	_, err = g.Execute(ctx, tk.ID)
	fmt.Println(err)
	// Output:
	// held: true
	// the store's clock stepped back 1 approved <nil>
	// execute: stepup: revoked
}

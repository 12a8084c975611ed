package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/sqlite"
)

// errDamaged is what the integrity command returns for a damaged store,
// so the process exits non-zero.
var errDamaged = errors.New("the store is damaged")

// runIntegrity is the integrity command: it checks a gateway's store end
// to end (store.Checker: SQLite's integrity_check, the audit chain from
// its first record to its head, the ticket rows), prints a summary that
// says what is damaged, where, and what to do, and fails when anything
// is. It only reads: a damaged SQLite file is opened read-only, so it can
// be inspected while the gateway refuses to open it.
//
//	go run ./examples/gateway integrity -db asu.db
//	go run ./examples/gateway integrity -postgres "$DSN" -json   # the report as JSON, for monitoring
func runIntegrity(ctx context.Context, w io.Writer, args []string) error {
	fs := flag.NewFlagSet("integrity", flag.ContinueOnError)
	fs.SetOutput(w)
	db := fs.String("db", "", "the gateway's SQLite `file`")
	dsn := fs.String("postgres", "", "the gateway's PostgreSQL `DSN`")
	asJSON := fs.Bool("json", false, "print the report as JSON, for monitoring, instead of the summary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*db == "") == (*dsn == "") || fs.NArg() > 0 {
		return errors.New("usage: integrity (-db FILE | -postgres DSN) [-json]")
	}
	var (
		st  store.Store
		err error
	)
	if *db != "" {
		if _, err := os.Stat(*db); err != nil {
			return fmt.Errorf("%w (never creating an empty database here)", err)
		}
		st, err = sqlite.Open(ctx, *db, &sqlite.Options{Inspect: true})
	} else {
		st, err = postgres.Open(ctx, *dsn, &postgres.Options{SkipMigrate: true})
	}
	if err != nil {
		return err
	}
	defer st.Close()
	checker, ok := st.(store.Checker)
	if !ok {
		return errors.New("this store cannot check itself")
	}
	report, err := checker.Check(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		fmt.Fprint(w, report.Summary())
	}
	if report.Damaged() {
		return fmt.Errorf("%w: %d problems (see above)", errDamaged, len(report.Problems))
	}
	return nil
}

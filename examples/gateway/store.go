package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/sqlite"
)

// openStore opens the store the flags name: -db (SQLite, one machine) or
// -postgres (PostgreSQL, shared by replicas), never both. existing refuses
// to create a new SQLite file, for commands that only read or add to a
// gateway's database. clock is the SQLite store's clock (nil: time.Now);
// PostgreSQL's is the database's own.
func openStore(ctx context.Context, db, dsn string, existing bool, clock func() time.Time) (store.Store, string, error) {
	switch {
	case db != "" && dsn != "":
		return nil, "", errors.New("give -db or -postgres, not both")
	case dsn != "":
		st, err := postgres.Open(ctx, dsn, nil)
		if err != nil {
			return nil, "", err // its errors never quote the DSN
		}
		return st, "PostgreSQL (-postgres)", nil
	case db == "":
		return nil, "", errors.New("name the gateway's store with -db FILE or -postgres DSN")
	}
	if existing {
		if _, err := os.Stat(db); err != nil {
			return nil, "", fmt.Errorf("%w (never creating an empty database here)", err)
		}
	}
	st, err := sqlite.Open(ctx, db, &sqlite.Options{Clock: clock})
	if err != nil {
		return nil, "", err
	}
	return st, "SQLite " + db, nil
}

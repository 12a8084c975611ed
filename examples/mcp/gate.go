package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/store/sqlite"
)

// localGate is an asu gate in this process on an SQLite file, deciding
// with the confirmed seed catalog, its tools run by a recorder.
type localGate struct {
	gate    *stepup.Gate
	st      *sqlite.Store
	rec     *recorder
	tools   []gatedTool // what the MCP server offers
	reviews []review    // upstream hints next to the catalog
}

// openGate builds the gate in dir (the database and the files that
// references resolve in, holding the reference program's q3.csv) for approvers of rp.
func openGate(dir string, rp stepup.RelyingParty, opts ...stepup.Option) (*localGate, error) {
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return nil, err
	}
	q3 := []byte("region,revenue\nwest,410\neast,385\n")
	if err := os.WriteFile(filepath.Join(files, "q3.csv"), q3, 0o600); err != nil {
		return nil, err
	}
	entries, tools, reviews, err := confirmCatalog(seedUpstream(), seedEntries())
	if err != nil {
		return nil, err
	}
	cat, err := stepup.NewCatalog(policyVersion, entries...)
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		return nil, err
	}
	lg := &localGate{st: st, rec: newRecorder(), tools: tools, reviews: reviews}
	opts = append([]stepup.Option{stepup.WithResolver(canon.FileResolver{Root: files})}, opts...)
	for _, e := range entries {
		opts = append(opts, stepup.WithExecutor(e.Name, lg.rec))
	}
	if lg.gate, err = stepup.New(st, cat, rp, opts...); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	return lg, nil
}

// Close closes the store.
func (lg *localGate) Close() error { return lg.st.Close() }

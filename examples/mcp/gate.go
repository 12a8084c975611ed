package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/store/sqlite"
)

// localGate is an asu gate in this process on an SQLite file, deciding
// with the confirmed seed catalog, its tools run by a recorder.
type localGate struct {
	gate    *gate.Gate
	enroll  *passkey.Enrollment
	st      *sqlite.Store
	rec     *recorder
	tools   []gatedTool // what the MCP server offers
	reviews []review    // upstream hints next to the catalog
}

// openGate builds the gate in dir (the database and the files that
// references resolve in, holding the reference program's q3.csv) for approvers of rp.
func openGate(dir string, rp passkey.RelyingParty, opts ...gate.Option) (*localGate, error) {
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
	cat, err := policy.NewCatalog(policyVersion, entries...)
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "asu.db"), nil)
	if err != nil {
		return nil, err
	}
	lg := &localGate{st: st, rec: newRecorder(), tools: tools, reviews: reviews}
	opts = append([]gate.Option{gate.WithResolver(canon.FileResolver{Root: files})}, opts...)
	for _, e := range entries {
		opts = append(opts, gate.WithExecutor(e.Name, lg.rec))
	}
	approver, err := passkey.New(st, rp)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	if lg.gate, err = gate.New(st, cat, approver, opts...); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	if lg.enroll, err = passkey.NewEnrollment(st, rp); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("gate: %w", err)
	}
	return lg, nil
}

// Close closes the store.
func (lg *localGate) Close() error { return lg.st.Close() }

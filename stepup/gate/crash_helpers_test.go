package gate_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// errKilled is what a killed process's store calls would see, had they
// been made.
var errKilled = errors.New("the gate's process was killed")

// dying is one gate's view of a shared store that can be killed: from
// then on nothing that gate asks reaches the store, as when its process
// dies. A test's executor kills it (then panics, or returns) to crash
// the gate between the consume and the outcome's record: the gate
// contains the executor's panic, but the outcome it would record never
// arrives, so the ticket stays executing for recovery.
type dying struct {
	store.Store
	dead atomic.Bool
}

func (d *dying) kill() { d.dead.Store(true) }

func (d *dying) gone() error {
	if d.dead.Load() {
		return errKilled
	}
	return nil
}

func (d *dying) Now(ctx context.Context) (time.Time, error) {
	if err := d.gone(); err != nil {
		return time.Time{}, err
	}
	return d.Store.Now(ctx)
}

func (d *dying) Finish(ctx context.Context, id string, fence int64, o store.Outcome, note store.Note) (store.Approval, error) {
	if err := d.gone(); err != nil {
		return store.Approval{}, err
	}
	return d.Store.Finish(ctx, id, fence, o, note)
}

func (d *dying) Renew(ctx context.Context, id, owner string, fence int64, until time.Time) error {
	if err := d.gone(); err != nil {
		return err
	}
	return d.Store.Renew(ctx, id, owner, fence, until)
}

func (d *dying) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	if err := d.gone(); err != nil {
		return audit.Record{}, err
	}
	return d.Store.AppendAudit(ctx, r)
}

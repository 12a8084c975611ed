package gate_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// editedGrants is a store whose grant rows a database writer has edited:
// once edit is set, every grant read returns the row as edit leaves it.
// Only the row's text changes; the approval that issued the grant, its
// ticket, its passkey assertion and the gate's MACs are all as the gate
// wrote them.
type editedGrants struct {
	*memory.Store
	edit atomic.Pointer[func(store.Grant) store.Grant]
}

func (s *editedGrants) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	g, err := s.Store.GetGrant(ctx, id)
	if f := s.edit.Load(); err == nil && f != nil {
		g = (*f)(g)
	}
	return g, err
}

// newEditedGrantWorld is the refund gate of grant_test.go over an
// editedGrants store, with Dana's grant (refunds of A-17 up to 120)
// issued through the desk with her passkey.
func newEditedGrantWorld(t *testing.T) (*grantWorld, *editedGrants) {
	t.Helper()
	clock := stepuptest.NewClock(stepuptest.Start())
	mem := memory.New(&memory.Options{Clock: clock.Now})
	t.Cleanup(func() { _ = mem.Close() })
	st := &editedGrants{Store: mem}
	pk, err := passkey.New(st, stepuptest.RP(), passkey.RequireSeal(stepuptest.SealKey()))
	require.NoError(t, err)
	w := &grantWorld{exec: &recorder{}}
	g, err := gate.New(st, refundCatalog(t, ""), pk, gate.WithLocalClock(clock.Now), gate.WithDwell(0),
		gate.WithExecutor("issue_refund", w.exec))
	require.NoError(t, err)
	enr, err := passkey.NewEnrollment(mem, stepuptest.RP(), passkey.WithClock(clock.Now),
		passkey.WithSealKey(stepuptest.SealKey()))
	require.NoError(t, err)
	w.Harness = &stepuptest.Harness{Gate: g, Enrollment: enr, Store: mem, Clock: clock}
	w.Authenticator = w.Enroll(t, stepuptest.Approver)
	w.grant = w.issue(t, refundTemplate(), 50)
	return w, st
}

// widenedSpecs are edits a database writer makes to the text of Dana's
// grant: each covers refunds she never delegated.
func widenedSpecs(t *testing.T) map[string][]byte {
	t.Helper()
	specs := map[string]grant.Grant{
		"amount ceiling raised": {Kind: grant.KindTemplate, Template: &grant.Template{
			Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
			Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "5000")}}},
		"order pin moved": {Kind: grant.KindTemplate, Template: &grant.Template{
			Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
			Args: []grant.Rule{grant.Pin("/order", "B-99"), grant.Range("/amount", "0", "5000")}}},
	}
	out := make(map[string][]byte, len(specs))
	for name, g := range specs {
		b, err := g.Marshal()
		require.NoError(t, err)
		out[name] = b
	}
	return out
}

// TestGrantRowEditedInTheDatabaseApprovesNothingNew: the database is not
// trusted to approve, and a grant approves only what the approval that
// issued it approved. A writer who widens the grant row's spec (a refund
// of 4000, or order B-99, under Dana's grant of "A-17 up to 120") gets no
// call approved by it: coverage is judged against the spec Dana's passkey
// signed, and a row that differs from it approves nothing. A gate that
// judged the row as stored approved such a refund under its own MAC.
func TestGrantRowEditedInTheDatabaseApprovesNothingNew(t *testing.T) {
	ctx := context.Background()
	for name, spec := range widenedSpecs(t) {
		for _, order := range []string{"A-17", "B-99"} {
			if (name == "amount ceiling raised") != (order == "A-17") {
				continue // the edit does not reach this order
			}
			t.Run(fmt.Sprintf("%s, order %s", name, order), func(t *testing.T) {
				w, st := newEditedGrantWorld(t)
				call := refund(fmt.Sprintf(`{"order":%q,"amount":4000}`, order))
				call.Step = "before"
				// The control: the grant as Dana issued it leaves the call to
				// a person, so the check below can fail.
				tk, _ := w.propose(t, call)
				require.Equal(t, stepup.StatusPending, tk.Status, "Dana's own grant does not cover 4000")

				edit := func(g store.Grant) store.Grant { g.Spec = spec; return g }
				st.edit.Store(&edit)
				call.Step = "after"
				tk, _ = w.propose(t, call)
				if tk.Status == stepup.StatusApproved {
					_, err := w.Gate.Execute(ctx, tk.ID)
					assert.Error(t, err, "a refund approved by an edited grant row ran")
				}
				assert.NotEqual(t, stepup.StatusApproved, tk.Status,
					"an edited grant row approved a call its issuing approval never covered")
				assert.Zero(t, w.exec.Count(), "the refund ran on a grant row the database rewrote")
			})
		}
	}
}

// TestGrantRowEditedAfterItApproved: the same edit made after Propose
// approved a call within the grant changes nothing for that call (the
// control that the world runs approved calls at all).
func TestGrantRowEditedAfterItApproved(t *testing.T) {
	ctx := context.Background()
	w, _ := newEditedGrantWorld(t)
	call := refund(`{"order":"A-17","amount":100}`)
	tk, _ := w.propose(t, call)
	require.Equal(t, stepup.StatusApproved, tk.Status)
	w.Clock.Advance(time.Second)
	_, err := w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, w.exec.Count())
}

package stepuptest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// RP returns the relying party of gates built by [NewGate].
func RP() passkey.RelyingParty {
	return passkey.RelyingParty{ID: "approve.example.com", Origin: "https://approve.example.com", Name: "asu"}
}

// Start returns the time a [NewGate] clock starts at.
func Start() time.Time { return time.Date(2026, 10, 30, 9, 0, 0, 0, time.UTC) }

// Approver is the user [NewGate] enrolls.
const Approver = "user:dana"

// Harness is a gate on store/memory with a fake clock and one enrolled
// approver holding a fake authenticator: the in-process stand-in for the
// whole trust infrastructure.
type Harness struct {
	Gate          *gate.Gate
	Enrollment    *passkey.Enrollment
	Store         *memory.Store
	Clock         *Clock
	Authenticator *Authenticator // Approver's
}

// NewGate builds a [Harness] deciding with policy (nil means
// [SeedCatalog]) and enrolls [Approver] through the real invite and
// registration path. The store's clock is the harness's fake [Clock]:
// the gate reads every time from its store, and measures its own waits
// (gate.WithLocalClock) on the same clock. opts are passed to gate.New.
// In a test:
//
//	h := stepuptest.NewGate(t, nil, stepup.WithExecutor("send_email", exec))
//	tk, _ := h.Gate.Propose(ctx, call)
//	tk, err := h.Approve(tk.ID)
//	res, err := h.Gate.Execute(ctx, tk.ID)
func NewGate(t testing.TB, policy plug.Policy, opts ...gate.Option) *Harness {
	t.Helper()
	return NewGateWith(t, policy, nil, opts...)
}

// NewGateWith is [NewGate] with another approver than the passkey one
// (nil means passkeys): a model-based approver, a double that answers in
// a fixed name. [Approver] is still enrolled with a passkey.
func NewGateWith(t testing.TB, policy plug.Policy, approver plug.Approver, opts ...gate.Option) *Harness {
	t.Helper()
	if policy == nil {
		policy = SeedCatalog()
	}
	h := &Harness{Clock: NewClock(Start())}
	h.Store = memory.New(&memory.Options{Clock: h.Clock.Now})
	if approver == nil {
		pk, err := passkey.New(h.Store, RP(), passkey.RequireSeal(SealKey()))
		if err != nil {
			t.Fatalf("stepuptest: passkey approver: %v", err)
		}
		approver = pk
	}
	// The gate's own waits run on the fake clock too (a test advancing
	// it past a lease sees the lease's owner gone). Its approvers answer
	// as soon as they are shown a card: a test of the dwell time passes
	// gate.WithDwell, or advances the clock between prompt and answer.
	g, err := gate.New(h.Store, policy, approver,
		append([]gate.Option{gate.WithLocalClock(h.Clock.Now), gate.WithDwell(0)}, opts...)...)
	if err != nil {
		t.Fatalf("stepuptest: new gate: %v", err)
	}
	h.Gate = g
	h.Enrollment, err = passkey.NewEnrollment(h.Store, RP(), passkey.WithClock(h.Clock.Now),
		passkey.WithSealKey(SealKey()))
	if err != nil {
		t.Fatalf("stepuptest: enrollment: %v", err)
	}
	h.Authenticator = h.Enroll(t, Approver)
	t.Cleanup(func() { _ = h.Store.Close() })
	return h
}

// Enroll invites user, registers a fresh fake authenticator through the
// gate's enrollment ceremony and returns it.
func (h *Harness) Enroll(t testing.TB, user string, tweaks ...Tweak) *Authenticator {
	t.Helper()
	a, err := Enroll(context.Background(), h.Enrollment, user, tweaks...)
	if err != nil {
		t.Fatalf("stepuptest: enroll %s: %v", user, err)
	}
	return a
}

// Enroll invites user through enrollment, registers a fresh fake authenticator
// for the gate's relying party and returns it.
func Enroll(ctx context.Context, admin *passkey.Enrollment, user string, tweaks ...Tweak) (*Authenticator, error) {
	token, err := admin.Invite(ctx, user)
	if err != nil {
		return nil, err
	}
	opts, err := admin.BeginEnroll(ctx, token)
	if err != nil {
		return nil, err
	}
	a := NewAuthenticator(RP().ID, RP().Origin)
	resp, err := a.Register(opts, tweaks...)
	if err != nil {
		return nil, err
	}
	if _, err := admin.FinishEnroll(ctx, token, resp); err != nil {
		return nil, err
	}
	return a, nil
}

// Approve shows ticket id to the approver and approves it with a, the
// whole approver round trip: Prompt, Show, passkey assertion, Approve. It
// answers at once: on a gate with a dwell time, show the card earlier
// (Desk.Show) and let the clock run, or expect stepup.ErrTooFast.
func Approve(ctx context.Context, desk *gate.Desk, a *Authenticator, id stepup.TicketID, tweaks ...Tweak) (stepup.Ticket, error) {
	p, err := desk.Prompt(ctx, id)
	if err != nil {
		return stepup.Ticket{}, err
	}
	if err := desk.Show(ctx, id); err != nil { // the card is on the approver's screen
		return stepup.Ticket{}, err
	}
	assertion, err := a.Assert(p.Options, tweaks...)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return desk.Approve(ctx, id, assertion)
}

// Approve approves ticket id as [Approver].
func (h *Harness) Approve(id stepup.TicketID, tweaks ...Tweak) (stepup.Ticket, error) {
	return Approve(context.Background(), h.Gate.Desk(), h.Authenticator, id, tweaks...)
}

// Grant asks [Approver] for the delegated approval spec and approves it
// with her passkey, as a test's setup would: the whole round trip of
// stepup.ApprovalDesk.Grant, Prompt and Approve. It returns the grant's id,
// for stepup.Call.Grant.
func (h *Harness) Grant(spec gate.GrantSpec) (string, error) {
	ctx := context.Background()
	desk := h.Gate.Desk()
	tk, err := desk.Grant(ctx, Approver, spec)
	if err != nil {
		return "", err
	}
	done, err := Approve(ctx, desk, h.Authenticator, tk.ID)
	if err != nil {
		return "", err
	}
	if done.Status != stepup.StatusExecuted {
		return "", fmt.Errorf("stepuptest: grant not issued: ticket %s", done.Status)
	}
	return string(tk.ID), nil
}

// Deny shows ticket id to the approver and denies it with a, signing the
// ticket's deny challenge: the whole round trip of a passkey denial.
func Deny(ctx context.Context, desk *gate.Desk, a *Authenticator, id stepup.TicketID, reason string, tweaks ...Tweak) (stepup.Ticket, error) {
	p, err := desk.Prompt(ctx, id)
	if err != nil {
		return stepup.Ticket{}, err
	}
	assertion, err := a.Assert(p.DenyOptions, tweaks...)
	if err != nil {
		return stepup.Ticket{}, err
	}
	return desk.Deny(ctx, id, assertion, reason)
}

// Deny denies ticket id as [Approver], with reason.
func (h *Harness) Deny(id stepup.TicketID, reason string, tweaks ...Tweak) (stepup.Ticket, error) {
	return Deny(context.Background(), h.Gate.Desk(), h.Authenticator, id, reason, tweaks...)
}

// SealKey is the key test enrollments seal credentials with and test
// approvers require ([passkey.WithSealKey], [passkey.RequireSeal]). It is
// public: never use it outside tests.
func SealKey() []byte { return []byte("stepuptest: the credential seal key of every test world") }

// Passkeys returns the passkey approver of credentials kept in creds for
// [RP], requiring the [SealKey] seal: the approver [NewGate] gives its
// gate.
func Passkeys(creds store.Credentials) *passkey.Approver {
	a, err := passkey.New(creds, RP(), passkey.RequireSeal(SealKey()))
	if err != nil {
		panic("stepuptest: passkey approver: " + err.Error()) // RP is valid: a bug in this file
	}
	return a
}

// Enrollment returns the passkey enrollment of st for [RP], on the wall
// clock, sealing with [SealKey].
func Enrollment(st passkey.InviteStore) *passkey.Enrollment {
	e, err := passkey.NewEnrollment(st, RP(), passkey.WithSealKey(SealKey()))
	if err != nil {
		panic("stepuptest: enrollment: " + err.Error()) // RP is valid: a bug in this file
	}
	return e
}

// Memory returns a store/memory store on clock: the store a gate reads
// its time from.
func Memory(clock *Clock) *memory.Store { return memory.New(&memory.Options{Clock: clock.Now}) }

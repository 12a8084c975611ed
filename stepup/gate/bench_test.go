package gate_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/sqlite"
)

// benchStores are the backends the gate benchmarks run on.
func benchStores(b *testing.B) map[string]func() store.Store {
	return map[string]func() store.Store{
		"memory": func() store.Store { return memory.New(nil) },
		"sqlite": func() store.Store {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "asu.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
}

func benchGate(b *testing.B, st store.Store, opts ...gate.Option) (*gate.Gate, *stepuptest.Authenticator) {
	b.Helper()
	// The benchmarks' approver answers at once: they measure the gate, not reading.
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), append([]gate.Option{gate.WithDwell(0), gate.WithExecutor("write_draft", &recorder{}), gate.WithExecutor("send_email", plug.ExecutorFunc(
		func(context.Context, canon.Effect, string) ([]byte, error) { return []byte(`{}`), nil }))}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	a, err := stepuptest.Enroll(context.Background(), stepuptest.Enrollment(st), "user:dana")
	if err != nil {
		b.Fatal(err)
	}
	return g, a
}

// oneKB is a write_draft call of about 1 KB.
func oneKB(i int) stepup.Call { return sizedDraft(i, 1<<10) }

// sizedDraft is a write_draft call of about size bytes, most of them the
// draft's body.
func sizedDraft(i, size int) stepup.Call {
	const line = "Quarterly numbers attached. "
	body := strings.Repeat(line, max(1, (size-100)/len(line)))
	args := fmt.Sprintf(`{"to":"finance@example.com","subject":"Q3 summary %d","body":%q}`, i, body)
	return stepup.Call{Tool: "write_draft", Args: json.RawMessage(args), Task: "t-42", Step: fmt.Sprint(i),
		Session: "s", Principal: agentFor("user:dana")}
}

// BenchmarkPropose measures the allowed path: canon, policy, park as
// approved by the policy, audit row.
func BenchmarkPropose(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			g, _ := benchGate(b, open())
			ctx := context.Background()
			b.SetBytes(int64(len(oneKB(0).Args)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tk, err := g.Propose(ctx, oneKB(i))
				if err != nil || tk.Status != stepup.StatusAllowed {
					b.Fatal(err, tk.Status)
				}
			}
		})
	}
}

// pendingCall is the i-th send_email that needs approval, each of its own
// user and session, so that the default flood limits (which the benchmarks
// keep on) admit every one.
func pendingCall(i int) stepup.Call {
	c := sendEmail("finance@example.com")
	c.Step, c.Session, c.Principal.User = fmt.Sprint(i), fmt.Sprint("s-", i), fmt.Sprint("user:u", i)
	return c
}

// BenchmarkProposePending measures the needs-approval path (canon,
// policy, card, park, audit) with flood's default admission and, as the
// baseline in the same run, without flood control.
func BenchmarkProposePending(b *testing.B) {
	for name, open := range benchStores(b) {
		for _, mode := range []struct {
			name string
			opts []gate.Option
		}{{"flood", nil}, {"noflood", []gate.Option{gate.WithoutFloodControlUnsafe()}}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				g, _ := benchGate(b, open(), mode.opts...)
				ctx := context.Background()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tk, err := g.Propose(ctx, pendingCall(i))
					if err != nil || tk.Status != stepup.StatusPending {
						b.Fatal(err, tk.Status, tk.Reason)
					}
				}
			})
		}
	}
}

// BenchmarkApprove measures Approve on a prepared assertion: load the
// ticket, re-decide, recompute the challenge, verify with go-webauthn
// (one P-256 verify), advance the counter, resolve, audit, end the flood
// limiter's runs of denials. Compare with
// BenchmarkVerifyP256 and BenchmarkApproveStoreWrites in the same run.
func BenchmarkApprove(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			benchApprove(b, open())
		})
		b.Run(name+"/noflood", func(b *testing.B) {
			benchApprove(b, open(), gate.WithoutFloodControlUnsafe())
		})
	}
}

func benchApprove(b *testing.B, st store.Store, opts ...gate.Option) {
	g, _ := benchGate(b, st, opts...)
	ctx := context.Background()
	enroll := stepuptest.Enrollment(st)
	ids := make([]stepup.TicketID, b.N)
	answers := make([][]byte, b.N)
	for i := range b.N {
		c := pendingCall(i)
		a, err := stepuptest.Enroll(ctx, enroll, c.Principal.User) // only the ticket's user approves it
		if err != nil {
			b.Fatal(err)
		}
		tk, err := g.Propose(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		p, err := g.Desk().Prompt(ctx, tk.ID)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = tk.ID
		if answers[i], err = a.Assert(p.Options); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Desk().Approve(ctx, ids[i], answers[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyP256 is Approve's baseline: one ECDSA P-256 signature
// verification over a SHA-256 digest.
func BenchmarkVerifyP256(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	digest := sha256.Sum256([]byte("authenticator data and client data hash"))
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !ecdsa.VerifyASN1(&key.PublicKey, digest[:], sig) {
			b.Fatal("verify failed")
		}
	}
}

// BenchmarkApproveStoreWrites is the store part of Approve: advance the
// sign counter, resolve the ticket, append the audit row.
func BenchmarkApproveStoreWrites(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			st := open()
			ctx := context.Background()
			now, err := st.Now(ctx) // the store refuses times off its clock
			if err != nil {
				b.Fatal(err)
			}
			cred := store.Credential{ID: []byte("cred"), User: "user:dana", PublicKey: []byte{1}, CreatedAt: now}
			if err := st.PutCredential(ctx, cred); err != nil {
				b.Fatal(err)
			}
			ids := make([]string, b.N)
			for i := range b.N {
				eff := []byte(fmt.Sprintf(`{"n":%d}`, i))
				a, _, err := st.Park(ctx, store.Approval{Effect: eff, Digest: canon.Sum(eff), Tool: "send_email",
					CreatedAt: now, ExpiresAt: now.Add(time.Hour), Session: "s", User: "user:dana"}, store.Caps{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = a.ID
			}
			evidence := make([]byte, 700)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := st.AdvanceSignCount(ctx, cred.ID, uint32(i+1)); err != nil {
					b.Fatal(err)
				}
				_, err := st.Resolve(ctx, ids[i], store.Resolution{To: store.Approved, Approver: "user:dana",
					Evidence: evidence, At: now}, func(a store.Approval, _ bool) receipt.AuditRecord {
					return receipt.AuditRecord{TicketID: a.ID, Decision: receipt.DecisionApproved, ArgsDigest: a.Digest,
						Approver: "user:dana"}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExecute measures Execute of an allowed 1 KB call: re-hash,
// consume with the intent record, run a no-op executor, finish, audit.
func BenchmarkExecute(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			g, _ := benchGate(b, open())
			ctx := context.Background()
			ids := make([]stepup.TicketID, b.N)
			for i := range b.N {
				tk, err := g.Propose(ctx, oneKB(i))
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = tk.ID
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.Execute(ctx, ids[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProposeAllowed is the allowed path on store/memory (canon,
// policy, sealing, one park with its audit row) beside its baseline in the
// same run: one canon.Canonicalize of the same arguments. It runs at four
// sizes of call: the fixed work of a Propose (the audit row, the gate's
// MAC, the store's row) weighs most on the smallest, and is nearly all of
// the tiny call's (about 100 bytes).
func BenchmarkProposeAllowed(b *testing.B) {
	for _, size := range []int{0, 1 << 10, 16 << 10, 128 << 10} {
		name := fmt.Sprintf("%dKB", size>>10)
		if size == 0 {
			name = "tiny"
		}
		b.Run(name+"/canonicalize", func(b *testing.B) {
			args := sizedDraft(0, size).Args
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				if _, err := canon.Canonicalize(args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/propose/memory", func(b *testing.B) {
			g, _ := benchGate(b, memory.New(nil))
			ctx := context.Background()
			calls := make([]stepup.Call, 64) // built outside the loop: the benchmark times the gate
			for i := range calls {
				calls[i] = sizedDraft(i, size)
			}
			b.SetBytes(int64(len(calls[0].Args)))
			i := 0
			for b.Loop() {
				i++
				tk, err := g.Propose(ctx, calls[i%len(calls)])
				if err != nil || tk.Status != stepup.StatusAllowed {
					b.Fatal(err, tk.Status)
				}
			}
		})
	}
}

// BenchmarkRunnable is the check Execute makes before it spends anything
// on a passkey approval (the policy again, the stored assertion verified
// offline against the enrolled key, the effect re-hashed): the cost of not
// trusting the database. Compare with BenchmarkVerifyP256 in the same run.
func BenchmarkRunnable(b *testing.B) {
	st := memory.New(nil)
	g, a := benchGate(b, st)
	ctx := context.Background()
	tk, err := g.Propose(ctx, sendEmail("finance@example.com"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := stepuptest.Approve(ctx, g.Desk(), a, tk.ID); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := g.Runnable(ctx, tk.ID); err != nil {
			b.Fatal(err)
		}
	}
}

package gate_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// secretish draws values that look like secrets, in many spellings and
// scripts, each with fresh random material.
func secretish(t *testing.T, i int) string {
	t.Helper()
	var b [12]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	r := hex.EncodeToString(b[:])
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	require.NoError(t, err)
	shapes := []string{
		"sk-live-" + r, "AKIA" + strings.ToUpper(r[:16]), "ghp_" + r + r[:12], "password=" + r,
		"Bearer eyJ" + r, "пароль-" + r, "パスワード" + r, "كلمة-" + r, "PIN " + n.String(), "-----BEGIN KEY-----" + r,
		"IBAN DE" + n.String() + r[:6], r + "@secret.example",
	}
	return shapes[i%len(shapes)]
}

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// leaked returns the secrets that appear in log, in any of the forms a
// handler may write them (as is, JSON-escaped, Go-quoted).
func leaked(log string, secrets []string) []string {
	var out []string
	for _, s := range secrets {
		j, _ := json.Marshal(s)
		q := fmt.Sprintf("%q", s)
		if strings.Contains(log, s) || strings.Contains(log, string(j[1:len(j)-1])) || strings.Contains(log, q[1:len(q)-1]) {
			out = append(out, s)
		}
	}
	return out
}

func TestLogsCarryNoSecrets(t *testing.T) {
	for round := range 24 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			var text, js lockedBuffer
			opts := &slog.HandlerOptions{Level: slog.LevelDebug}
			log := slog.New(fanout{slog.NewTextHandler(&text, opts), slog.NewJSONHandler(&js, opts)})
			w := newWorld(t, gate.WithLogger(log))
			ctx := context.Background()
			var secrets []string
			secret := func() string { s := secretish(t, round+len(secrets)); secrets = append(secrets, s); return s }

			mail := func(step string) stepup.Call {
				c := sendEmail("finance@example.com")
				args, err := json.Marshal(map[string]string{"to": "finance@example.com", "subject": secret(), "body": secret()})
				require.NoError(t, err)
				c.Args, c.Step, c.Rationale, c.Task = args, step, "the user asked; key "+secret(), "t-42"
				return c
			}
			// Approved and run.
			a, err := w.Gate.Propose(ctx, mail("a"))
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, a.Status)
			_, err = w.Approve(a.ID)
			require.NoError(t, err)
			_, err = w.Gate.Execute(ctx, a.ID)
			require.NoError(t, err)
			// Denied with the approver's words, withdrawn with the agent's.
			b, err := w.Gate.Propose(ctx, mail("b"))
			require.NoError(t, err)
			_, err = w.Deny(b.ID, "do not send "+secret())
			require.NoError(t, err)
			c, err := w.Gate.Propose(ctx, mail("c"))
			require.NoError(t, err)
			_, err = w.Gate.Cancel(ctx, c.ID, "withdrawn: "+secret())
			require.NoError(t, err)
			// Refused by a limit, refused by the schema, allowed at once.
			refund, err := json.Marshal(map[string]any{"order": secret(), "amount": 900})
			require.NoError(t, err)
			_, err = w.Gate.Propose(ctx, stepup.Call{Tool: "issue_refund", Args: refund, Session: "s",
				Principal: agentFor("user:dana")})
			require.NoError(t, err)
			bad, err := json.Marshal(map[string]string{"to": secret()})
			require.NoError(t, err)
			_, err = w.Gate.Propose(ctx, stepup.Call{Tool: "send_email", Args: bad, Session: "s", Principal: agentFor("user:dana")})
			require.NoError(t, err)
			rd, err := json.Marshal(map[string]string{"path": "q3.csv", "note": secret()})
			require.NoError(t, err)
			allowed, err := w.Gate.Propose(ctx, stepup.Call{Tool: "read_file", Args: rd, Session: "s",
				Principal: agentFor("user:dana"), Taint: []string{secret()}})
			require.NoError(t, err)
			_, err = w.Gate.Execute(ctx, allowed.ID)
			require.NoError(t, err)

			for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
				assert.Empty(t, leaked(out, secrets), "%s log", name)
				for _, want := range []string{"approved", "denied", "cancelled", "deny", "allow", "executed",
					string(a.ID), a.Digest.Short(), "send_email", "issue_refund"} {
					assert.Contains(t, out, want, "%s log records the decisions", name)
				}
			}
			// The check bites: a log line that carries the call, as a
			// naive integration's would, is caught.
			var naive lockedBuffer
			slog.New(slog.NewJSONHandler(&naive, nil)).Info("propose", "args", json.RawMessage(refund))
			assert.NotEmpty(t, leaked(naive.String(), secrets))
		})
	}
}

// fanout hands every record to each of its handlers.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool { return f[0].Enabled(ctx, l) }

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range f {
		errs = append(errs, h.Handle(ctx, r.Clone()))
	}
	return errors.Join(errs...)
}

func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

func TestLogsNameEveryDecisionOnce(t *testing.T) {
	var buf lockedBuffer
	w := newWorld(t, gate.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	ctx := context.Background()
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Approve(tk.ID)
	require.NoError(t, err)
	_, err = w.Gate.Execute(ctx, tk.ID)
	require.NoError(t, err)

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		delete(m, "time")
		lines = append(lines, m)
	}
	want := []map[string]any{
		{"level": "INFO", "msg": "gate decision", "decision": "needs_approval", "tool": "send_email", "class": "external",
			"ticket": string(tk.ID), "digest": tk.Digest.Short(), "reason": "external effect"},
		{"level": "INFO", "msg": "gate decision", "decision": "approved", "tool": "send_email", "class": "external",
			"ticket": string(tk.ID), "digest": tk.Digest.Short(), "reason": "approved by user:dana"},
		{"level": "INFO", "msg": "gate execution", "outcome": "executed", "tool": "send_email", "class": "external",
			"ticket": string(tk.ID), "digest": tk.Digest.Short()},
	}
	assert.Equal(t, want, lines)
}

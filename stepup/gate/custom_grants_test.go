package gate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
)

// TestCustomGrantsNarrowNeverWiden: a grant check of one's own that
// covers everything it is asked about (the most generous one possible)
// still runs only what the grant its user signed covers: every other call
// naming a grant goes to a person.
func TestCustomGrantsNarrowNeverWiden(t *testing.T) {
	generous := grantsFunc(func(_ context.Context, id string, _ canon.Sealed) (string, error) { return id, nil })
	tests := []struct {
		name  string
		args  string
		grant func(w *grantWorld) string
		want  stepup.Status
	}{
		{"covered by the signed grant", `{"order":"A-17","amount":10}`, func(w *grantWorld) string { return w.grant }, stepup.StatusApproved},
		{"another order", `{"order":"A-18","amount":10}`, func(w *grantWorld) string { return w.grant }, stepup.StatusPending},
		{"over the signed range", `{"order":"A-17","amount":121}`, func(w *grantWorld) string { return w.grant }, stepup.StatusPending},
		{"an argument the grant does not pin", `{"order":"A-17","amount":10,"to_account":"X-9"}`, func(w *grantWorld) string { return w.grant }, stepup.StatusPending},
		{"a grant nobody issued", `{"order":"A-17","amount":10}`, func(*grantWorld) string { return "g-made-up" }, stepup.StatusPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newGrantWorld(t, refundTemplate(), 5, gate.WithCoverage(generous))
			c := refund(tt.args)
			c.Grant = tt.grant(w)
			tk, err := w.Gate.Propose(context.Background(), c)
			require.NoError(t, err)
			assert.Equal(t, tt.want, tk.Status, tk.Reason)
		})
	}
}

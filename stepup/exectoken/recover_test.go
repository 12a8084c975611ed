package exectoken_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
)

// A ticket a separate executor consumed through its Verifier is that
// executor's to finish: the gate's Recover must not run it in-process too,
// or a crash of the executor would send the e-mail twice.
func TestGateRecoverLeavesRemoteExecutionsAlone(t *testing.T) {
	ctx := context.Background()
	w := newTokenWorld(t)
	call := sendEmail("finance@example.com")
	tk, tok := w.issued(t, call)
	_, err := w.mailer.Verify(ctx, tok, effectOf(call))
	require.NoError(t, err)
	require.Equal(t, store.Executing, w.state(t, tk.ID), "the mailer is running it")

	got, err := w.Gate.Recover(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Zero(t, w.Exec.Count(), "the gate ran the mailer's ticket")
	assert.Equal(t, store.Executing, w.state(t, tk.ID))
}

package gate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestQuorumAwaitedAgreesWithAcceptance: over generated sequences of
// approvals and passkey losses (revoked, then enrolled anew) among the
// three of finance, for a refund that needs two of them, whoever
// Progress awaits is listed in their queue and their approval is taken,
// and whoever it does not await is neither: an approval is taken exactly
// when Progress said it would be.
func TestQuorumAwaitedAgreesWithAcceptance(t *testing.T) {
	ctx := context.Background()
	members := []string{stepuptest.Approver, "user:erin", "user:finn"}
	for seed := range uint64(24) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			q := newQuorumDesk(t)
			auth := map[string]*stepuptest.Authenticator{stepuptest.Approver: q.Authenticator,
				"user:erin": q.erin, "user:finn": q.finn}
			tk, err := q.Gate.Propose(ctx, refundCall())
			require.NoError(t, err)
			for step := range 8 {
				q.Clock.Advance(time.Second)
				u := members[rng.IntN(len(members))]
				if rng.IntN(3) == 0 {
					ids := auth[u].CredentialIDs()
					require.NoError(t, q.Enrollment.RevokeCredential(ctx, ids[len(ids)-1], "user:ops", "lost"))
					auth[u] = q.Enroll(t, u)
					continue
				}
				p, err := q.Gate.Desk().Progress(ctx, tk.ID)
				require.NoError(t, err)
				awaited := slices.Contains(p.Awaited, u)
				queue, err := q.Gate.Desk().Queue(ctx, u, 0)
				require.NoError(t, err)
				listed := slices.ContainsFunc(queue, func(e plug.Entry) bool { return e.Ticket.ID == tk.ID })
				assert.Equal(t, awaited, listed, "step %d: %s awaited %v, listed %v (%s)", step, u, awaited, listed, p.Sentence())
				_, err = stepuptest.Approve(ctx, q.Gate.Desk(), auth[u], tk.ID)
				assert.Equal(t, awaited, err == nil, "step %d: %s awaited %v, approval: %v (%s)", step, u, awaited, err, p.Sentence())
				if err != nil && !errors.Is(err, stepup.ErrResolved) {
					assert.ErrorIs(t, err, stepup.ErrNotPermitted, "a refusal that says who may not")
				}
			}
		})
	}
}

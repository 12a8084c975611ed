package gate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestGrantRevokedWhileCallsArriveRunsNothingAfter: proposals naming the
// grant race its revocation (the grant itself, or the passkey that signed
// it); whatever Propose approved on either side of it, nothing runs once
// the revocation returned. Holds; a gate that checks the grant only at
// Propose runs the calls approved before the revocation (at least one
// here: it is revoked once the grant approved a call).
func TestGrantRevokedWhileCallsArriveRunsNothingAfter(t *testing.T) {
	ctx := context.Background()
	for name, revoke := range grantRevocations {
		for round := range 3 {
			t.Run(fmt.Sprintf("%s %d", name, round), func(t *testing.T) {
				w := newGrantAttack(t)
				const callers = 4
				var (
					wg       sync.WaitGroup
					mu       sync.Mutex
					approved []stepup.TicketID
				)
				start, first := make(chan struct{}), make(chan struct{})
				var once sync.Once
				for c := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						for i := range 3 {
							tk, err := w.Gate.Propose(ctx, w.refund(fmt.Sprintf("r%d-c%d-%d", round, c, i), 10+i))
							if err == nil && tk.Status == stepup.StatusApproved {
								mu.Lock()
								approved = append(approved, tk.ID)
								mu.Unlock()
								once.Do(func() { close(first) })
							}
						}
					}()
				}
				close(start)
				<-first // the grant approved a call: the revocation races the rest
				require.NoError(t, revoke(ctx, w))
				wg.Wait()
				ran := 0
				for _, id := range approved {
					if _, err := w.Gate.Execute(ctx, id); err == nil {
						ran++
					}
				}
				assert.Zero(t, ran, "%d of %d calls the grant approved ran after its revocation", ran, len(approved))
				assert.Zero(t, w.exec.Count())
			})
		}
	}
}

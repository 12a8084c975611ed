package ticketstore

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/store"
)

func TestRefusalLogWritesOncePerKindAndWindow(t *testing.T) {
	var l RefusalLog
	t0 := time.Unix(1_700_000_000, 0)
	write, n := l.Admit("t1", store.Done, "approval already used", t0)
	assert.True(t, write)
	assert.Zero(t, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := 0
	for i := range 1000 {
		wg.Go(func() {
			if w, _ := l.Admit("t1", store.Done, "approval already used", t0.Add(time.Duration(i)*time.Millisecond)); w {
				mu.Lock()
				written++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Zero(t, written, "identical refusals within the window are counted, not written")

	for _, other := range []struct {
		id     string
		state  store.State
		reason string
	}{{"t2", store.Done, "approval already used"}, {"t1", store.Revoked, "approval already used"}, {"t1", store.Done, "approval expired"}} {
		w, _ := l.Admit(other.id, other.state, other.reason, t0)
		assert.True(t, w, "%+v is another kind", other)
	}

	w, _ := l.Admit("t1", store.Done, "approval already used", t0.Add(-time.Hour))
	assert.False(t, w, "a clock stepped back stays within the window")
	w, n = l.Admit("t1", store.Done, "approval already used", t0.Add(RefusalWindow))
	assert.True(t, w)
	assert.Equal(t, 1001, n, "the next row says how many it stands for")
}

func TestRefusalLogIsBounded(t *testing.T) {
	var l RefusalLog
	t0 := time.Unix(1_700_000_000, 0)
	for i := range MaxRefusalKinds + 10 {
		l.Admit(fmt.Sprint(i), store.Done, "r", t0)
	}
	assert.Len(t, l.seen, MaxRefusalKinds)
	assert.Len(t, l.order, MaxRefusalKinds)
	w, _ := l.Admit("0", store.Done, "r", t0)
	assert.True(t, w, "the oldest was forgotten")
}

package inbox_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestQueueLinesCarryTheKeyField: each queued ticket carries what its one
// line shows, from the gate's card: the class and where the effect goes.
func TestQueueLinesCarryTheKeyField(t *testing.T) {
	r := newRig(t, nil)
	s, _ := r.open(t, r.signIn(t, r.erin))
	id := string(r.propose(t, "finance@example.com"))
	q := s.until(t, func(q queueOf) bool { return slices.Contains(q.ids(), id) })
	require.Len(t, q.Entries, 1)
	e := q.Entries[0]
	assert.Equal(t, card.ClassExternal, e.Line.Class)
	assert.Equal(t, "to example.com", e.Line.Key)
	assert.Equal(t, 1, e.Progress.Needed)
	assert.Empty(t, e.Progress.Signed)
	assert.Equal(t, []string{erin, finn}, e.Progress.Awaited)
	assert.Equal(t, []string{finn}, e.Others)
}

// TestQueueProgressMovesLive: a call that needs two of finance; once erin
// approved it, finn's queue, already showing it, says 1 of 2 by erin and
// that one more of finance is awaited, and names only himself as awaited;
// erin's queue no longer lists it.
func TestQueueProgressMovesLive(t *testing.T) {
	tools := stepuptest.SeedTools()
	for i := range tools {
		if tools[i].Name == "send_email" {
			tools[i].Approvers, tools[i].Quorum = "finance", 2
		}
	}
	cat, err := policy.NewCatalog(stepuptest.SeedPolicyVersion, tools...)
	require.NoError(t, err)
	r := newRigOn(t, cat, nil, nil)
	se, _ := r.open(t, r.signIn(t, r.erin))
	sf, _ := r.open(t, r.signIn(t, r.finn))
	id := string(r.propose(t, "finance@example.com"))
	has := func(q queueOf) bool { return slices.Contains(q.ids(), id) }
	qe := se.until(t, has)
	before := sf.until(t, has)
	assert.Equal(t, "0 of 2 approved; waiting for two more of finance", before.Entries[0].Progress.Sentence)

	resp, b := r.approveOnSite(t, r.erin, id, qe.Entries[0].Approve)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	assert.Contains(t, string(b), "1 of 2 approved by "+erin+"; waiting for one more of finance")
	assert.NotContains(t, string(b), "may now run")
	after := sf.until(t, func(q queueOf) bool {
		return has(q) && len(q.Entries[0].Progress.Signed) == 1
	})
	p := after.Entries[0].Progress
	assert.Equal(t, 2, p.Needed)
	assert.Equal(t, []string{erin}, p.Signed)
	assert.Equal(t, []string{finn}, p.Awaited)
	assert.Equal(t, "1 of 2 approved by "+erin+"; waiting for one more of finance", p.Sentence)
	assert.Empty(t, after.Entries[0].Others, "finn is the only one awaited")
	se.until(t, func(q queueOf) bool { return !has(q) })
}

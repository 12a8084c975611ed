package receipt_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
)

// known are the figures a generated record set has by construction.
type known struct {
	approved, denied, requests int
	// median and p90 are in milliseconds, set for the groups whose
	// decision times were drawn as one progression.
	median, p90 float64
	progression bool
	// perHour and peak are set for approvers and for all records.
	perHour float64
	peak    int
}

// generated is a record set and the figures it was built to have, per
// approver, per class and overall.
type generated struct {
	records    []receipt.AuditRecord
	approvers  map[string]*known
	classes    map[string]*known
	overall    *known
	decisionOf string // "approver", "class" or "all": whose decision times form one progression
}

// generate builds records for a few approvers and classes. Each
// approver's approvals are evenly spaced, gap seconds apart, so their
// active hours and busiest hour follow from the count and the gap. The
// decision times of each group named by by (every approver's, every
// class's, or all) are base + step*k for k = 0..n-1 in a random order,
// so their median and nearest-rank 90th percentile follow from n. The
// records are returned shuffled.
func generate(rng *rand.Rand, by string) generated {
	g := generated{approvers: map[string]*known{}, classes: map[string]*known{}, overall: &known{}, decisionOf: by}
	classNames := []string{"external", "irreversible", "reversible"}[:1+rng.IntN(3)]
	start := chainStart.UnixMilli()
	type row struct {
		rec   receipt.AuditRecord
		group string
	}
	var rows []row
	var hours float64
	for a := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("user:r%d", a)
		nApproved, nDenied := rng.IntN(45), rng.IntN(4)
		if nApproved+nDenied == 0 {
			continue
		}
		gap := int64(1 + rng.IntN(600)) // seconds between this approver's approvals
		k := &known{approved: nApproved, denied: nDenied}
		g.approvers[name] = k
		if nApproved > 0 {
			span := float64((int64(nApproved)-1)*gap) / 3600
			k.perHour = float64(nApproved) / max(span, 1)
			k.peak = min(nApproved, int((3600+gap-1)/gap))
			hours += max(span, 1)
			g.overall.peak = max(g.overall.peak, k.peak)
		}
		for j := range nApproved + nDenied {
			class := classNames[rng.IntN(len(classNames))]
			r := receipt.AuditRecord{EffectClass: class, Approver: name, Decision: receipt.DecisionApproved,
				Time: start + int64(j)*gap*1000}
			if j >= nApproved {
				r.Decision = receipt.DecisionDenied
				r.Time = start + rng.Int64N(48*3600*1000)
			}
			group := map[string]string{"approver": name, "class": class, "all": ""}[by]
			rows = append(rows, row{r, group})
			// Every decision answers a request; some requests expire.
			rows = append(rows, row{rec: receipt.AuditRecord{EffectClass: class, Decision: receipt.DecisionNeedsApproval, Time: r.Time}})
		}
	}
	for range rng.IntN(5) {
		class := classNames[rng.IntN(len(classNames))]
		rows = append(rows,
			row{rec: receipt.AuditRecord{EffectClass: class, Decision: receipt.DecisionNeedsApproval, Time: start}},
			row{rec: receipt.AuditRecord{EffectClass: class, Decision: receipt.DecisionExpired, Time: start}},
			row{rec: receipt.AuditRecord{EffectClass: class, Decision: receipt.DecisionAllow, Time: start}})
	}

	// Decision times: one shuffled progression per group.
	members := map[string][]int{}
	for i, r := range rows {
		if r.rec.Decision == receipt.DecisionApproved || r.rec.Decision == receipt.DecisionDenied {
			members[r.group] = append(members[r.group], i)
		}
	}
	progression := map[string][2]float64{} // group -> median, p90
	for group, idx := range members {
		// Half the groups decide in seconds, half take their time.
		base, step := int64(rng.IntN(3000)), int64(rng.IntN(300))
		if rng.IntN(2) == 0 {
			base, step = int64(rng.IntN(8000)), int64(rng.IntN(3000))
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for k, i := range idx {
			rows[i].rec.DecisionMillis = base + step*int64(k)
		}
		n := len(idx)
		progression[group] = [2]float64{float64(base) + float64(step)*float64(n-1)/2,
			float64(base + step*int64((9*n+9)/10-1))}
	}

	for _, r := range rows {
		rec := r.rec
		g.records = append(g.records, rec)
		c := g.classes[rec.EffectClass]
		if c == nil {
			c = &known{}
			g.classes[rec.EffectClass] = c
		}
		for _, k := range []*known{c, g.overall} {
			switch rec.Decision {
			case receipt.DecisionNeedsApproval:
				k.requests++
			case receipt.DecisionApproved:
				k.approved++
			case receipt.DecisionDenied:
				k.denied++
			}
		}
	}
	if hours > 0 {
		g.overall.perHour = float64(g.overall.approved) / hours
	}
	set := func(k *known, group string) {
		if p, ok := progression[group]; ok {
			k.median, k.p90, k.progression = p[0], p[1], true
		}
	}
	switch by {
	case "approver":
		for name, k := range g.approvers {
			set(k, name)
		}
	case "class":
		for name, k := range g.classes {
			set(k, name)
		}
	default:
		set(g.overall, "")
	}
	rng.Shuffle(len(g.records), func(i, j int) { g.records[i], g.records[j] = g.records[j], g.records[i] })
	return g
}

func checkKnown(t *testing.T, scope string, want *known, got receipt.ClassMetrics) {
	t.Helper()
	assert.Equal(t, want.approved, got.Approved, scope)
	assert.Equal(t, want.denied, got.Denied, scope)
	if n := want.approved + want.denied; n > 0 {
		assert.InDelta(t, float64(want.approved)/float64(n), got.ApprovalRate, 1e-12, scope)
	}
	if want.progression {
		assert.Equal(t, time.Duration(want.median*float64(time.Millisecond)), got.MedianDecision, scope)
		assert.Equal(t, time.Duration(want.p90*float64(time.Millisecond)), got.P90Decision, scope)
	}
	assert.LessOrEqual(t, got.MedianDecision, got.P90Decision, "%s: the median is never above P90", scope)
	assert.Equal(t, want.approved+want.denied >= 20 && got.ApprovalRate > 0.95 && got.MedianDecision < 5*time.Second,
		got.RubberStamp, scope)
}

func TestMetricsGeneratedFiguresAreKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 90))
	var stamped, notStamped int
	for i := range 300 {
		by := []string{"approver", "class", "all"}[i%3]
		g := generate(rng, by)
		m := receipt.Metrics(g.records)
		scope := fmt.Sprintf("set %d (%s)", i, by)

		require.Len(t, m.ByApprover, len(g.approvers), scope)
		for name, want := range g.approvers {
			got := m.ByApprover[name]
			checkKnown(t, scope+" approver "+name, want, got)
			assert.Zero(t, got.Requests, "requests name no approver")
			if want.approved > 0 {
				assert.Equal(t, 1, got.Reviewers)
				assert.InDelta(t, want.perHour, got.ApprovalsPerReviewerHour, 1e-9, scope)
				assert.Equal(t, want.peak, got.PeakReviewerHour, scope)
			}
		}
		require.Len(t, m.ByClass, len(g.classes), scope)
		for name, want := range g.classes {
			got := m.ByClass[name]
			checkKnown(t, scope+" class "+name, want, got)
			assert.Equal(t, want.requests, got.Requests, scope)
		}
		checkKnown(t, scope+" overall", g.overall, m.Overall)
		assert.Equal(t, g.overall.requests, m.Overall.Requests, scope)
		assert.InDelta(t, g.overall.perHour, m.Overall.ApprovalsPerReviewerHour, 1e-9, scope)
		assert.Equal(t, g.overall.peak, m.Overall.PeakReviewerHour, scope)

		// Every warning names a scope that tripped, and every scope that
		// tripped has one.
		tripped := 0
		for _, c := range m.ByClass {
			tripped += b2i(c.RubberStamp)
		}
		for _, c := range m.ByApprover {
			tripped += b2i(c.RubberStamp)
		}
		assert.Len(t, m.Warnings, tripped+b2i(m.Overall.RubberStamp), scope)
		tripped += b2i(m.Overall.RubberStamp)
		stamped += tripped
		notStamped += len(m.ByClass) + len(m.ByApprover) + 1 - tripped

		// Order does not matter.
		rev := slices.Clone(g.records)
		slices.Reverse(rev)
		assert.Equal(t, m, receipt.Metrics(rev), scope)
	}
	assert.Greater(t, stamped, 50, "the generator makes figures that trip the rule")
	assert.Greater(t, notStamped, 50, "and figures that do not")
	t.Logf("%d scopes tripped the rule, %d did not", stamped, notStamped)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

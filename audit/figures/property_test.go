package figures_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/figures"
	"github.com/agentstepup/asu/canon"
)

// known are the figures a generated record set has by construction.
type known struct {
	approved, denied, requests int
	// median and p90 are in milliseconds, set for the groups whose
	// decision times were drawn as one progression.
	median, p90 float64
	progression bool
	// perHour (nil: no measured active time), active and peak are set for
	// approvers and for all records.
	perHour *float64
	active  int64
	peak    int
}

// generated is a record set and the figures it was built to have, per
// approver, per class and overall.
type generated struct {
	records    []audit.Record
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
		rec   audit.Record
		group string
	}
	var rows []row
	var gaps, activeMillis int64
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
			// Active time as measured: first to last approval.
			k.active = (int64(nApproved) - 1) * gap * 1000
			if nApproved > 1 {
				ph := 3600 / float64(gap)
				k.perHour = &ph
			}
			k.peak = min(nApproved, int((3600+gap-1)/gap))
			gaps += int64(nApproved) - 1
			activeMillis += k.active
			g.overall.peak = max(g.overall.peak, k.peak)
		}
		for j := range nApproved + nDenied {
			class := classNames[rng.IntN(len(classNames))]
			r := audit.Record{EffectClass: class, Approver: name, Decision: audit.DecisionApproved,
				Time: start + int64(j)*gap*1000}
			if j >= nApproved {
				r.Decision = audit.DecisionDenied
				r.Time = start + rng.Int64N(48*3600*1000)
			}
			group := map[string]string{"approver": name, "class": class, "all": ""}[by]
			rows = append(rows, row{r, group})
			// Every decision answers a request; some requests expire.
			rows = append(rows, row{rec: audit.Record{EffectClass: class, Decision: audit.DecisionNeedsApproval, Time: r.Time}})
		}
	}
	for range rng.IntN(5) {
		class := classNames[rng.IntN(len(classNames))]
		rows = append(rows,
			row{rec: audit.Record{EffectClass: class, Decision: audit.DecisionNeedsApproval, Time: start}},
			row{rec: audit.Record{EffectClass: class, Decision: audit.DecisionExpired, Time: start}},
			row{rec: audit.Record{EffectClass: class, Decision: audit.DecisionAllow, Time: start}})
	}

	// Decision times: one shuffled progression per group.
	members := map[string][]int{}
	for i, r := range rows {
		if r.rec.Decision == audit.DecisionApproved || r.rec.Decision == audit.DecisionDenied {
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
			case audit.DecisionNeedsApproval:
				k.requests++
			case audit.DecisionApproved:
				k.approved++
			case audit.DecisionDenied:
				k.denied++
			}
		}
	}
	g.overall.active = activeMillis
	if activeMillis > 0 {
		ph := float64(gaps) / (float64(activeMillis) / 3_600_000)
		g.overall.perHour = &ph
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

func checkKnown(t *testing.T, scope string, want *known, got figures.Decisions) {
	t.Helper()
	assert.Equal(t, want.approved, got.Approvals, scope)
	assert.Equal(t, want.denied, got.Denials, scope)
	if n := want.approved + want.denied; n > 0 {
		require.NotNil(t, got.ApprovalRate, scope)
		require.NotNil(t, got.Time, scope)
		assert.InDelta(t, float64(want.approved)/float64(n), *got.ApprovalRate, 1e-12, scope)
		assert.LessOrEqual(t, got.Time.Median(), got.Time.P90(), "%s: the median is never above P90", scope)
	} else {
		assert.Nil(t, got.ApprovalRate, "%s: no decisions yet, not a rate of 0", scope)
		assert.Nil(t, got.Time, "%s: no decisions yet, not a median of 0s", scope)
	}
	if want.progression {
		assert.Equal(t, time.Duration(want.median*float64(time.Millisecond)), got.Time.Median(), scope)
		assert.Equal(t, time.Duration(want.p90*float64(time.Millisecond)), got.Time.P90(), scope)
	}
	trips := want.approved+want.denied >= 20 && float64(want.approved)/float64(want.approved+want.denied) > 0.95 &&
		got.Time.Median() < 5*time.Second
	assert.Equal(t, trips, got.RubberStamp, scope)
}

func checkPace(t *testing.T, scope string, want *known, got figures.Pace) {
	t.Helper()
	assert.Equal(t, want.active, got.ActiveMillis, "%s: active time as measured", scope)
	if want.perHour == nil {
		assert.Nil(t, got.ApprovalsPerActiveHour, "%s: no measured active time, no pace", scope)
	} else {
		require.NotNil(t, got.ApprovalsPerActiveHour, scope)
		assert.InDelta(t, *want.perHour, *got.ApprovalsPerActiveHour, 1e-9*(*want.perHour), scope)
	}
	assert.Equal(t, want.peak, got.PeakHour, scope)
}

// chained links records into a valid audit chain, as the gate's store
// writes it.
func chained(t *testing.T, records []audit.Record) []audit.Record {
	t.Helper()
	out := slices.Clone(records)
	var prev canon.Digest
	for i := range out {
		out[i].Seq, out[i].PrevHash, out[i].Taint = int64(i+1), prev, []string{}
		h, err := out[i].ComputeHash()
		require.NoError(t, err)
		out[i].Hash, prev = h, h
	}
	return out
}

func TestComputeGeneratedFiguresAreKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 90))
	var stamped, notStamped int
	for i := range 300 {
		by := []string{"approver", "class", "all"}[i%3]
		g := generate(rng, by)
		m := figures.Compute(g.records)
		scope := fmt.Sprintf("set %d (%s)", i, by)

		require.Len(t, m.ByApprover, len(g.approvers), scope)
		var sum figures.Decisions
		for name, want := range g.approvers {
			got := m.ByApprover[name]
			checkKnown(t, scope+" approver "+name, want, got.Decisions)
			checkPace(t, scope+" approver "+name, want, got.Pace)
			sum.Approvals += got.Approvals
			sum.Denials += got.Denials
		}
		assert.Equal(t, m.Overall.Approvals, sum.Approvals, "%s: every approval is someone's", scope)
		assert.Equal(t, m.Overall.Denials, sum.Denials, "%s: every denial is someone's", scope)
		require.Len(t, m.ByClass, len(g.classes), scope)
		var asked, lapsed int
		for name, want := range g.classes {
			got := m.ByClass[name]
			checkKnown(t, scope+" class "+name, want, got.Decisions)
			assert.Equal(t, want.requests, got.Asked, scope)
			asked += got.Asked
			lapsed += got.Lapsed
		}
		assert.Equal(t, m.Overall.Asked, asked, scope)
		assert.Equal(t, m.Overall.Lapsed, lapsed, scope)
		checkKnown(t, scope+" overall", g.overall, m.Overall.Decisions)
		checkPace(t, scope+" overall", g.overall, m.Overall.Pace)
		assert.Equal(t, g.overall.requests, m.Overall.Asked, scope)
		assert.Equal(t, len(g.approvers) > 0 && g.overall.approved > 0, m.PeakHour != nil, scope)
		if m.PeakHour != nil {
			assert.GreaterOrEqual(t, m.PeakHour.Approvals, m.Overall.PeakHour, "%s: all together at least one person's busiest hour", scope)
		}

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
		assert.Equal(t, m, figures.Compute(rev), scope)
	}
	assert.Greater(t, stamped, 50, "the generator makes figures that trip the rule")
	assert.Greater(t, notStamped, 50, "and figures that do not")
	t.Logf("%d scopes tripped the rule, %d did not", stamped, notStamped)
}

// TestComputeGeneratedChains: generated record sets, chained as a store
// writes them, exported and streamed back through the verifier: the
// figures of the streamed chain, counted one record at a time by a
// Tally, are the figures of the records, and their JSON reads back to the
// same report.
func TestComputeGeneratedChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 60 {
		g := generate(rng, []string{"approver", "class", "all"}[i%3])
		chain := chained(t, g.records)
		want := figures.Compute(chain)
		var buf bytes.Buffer
		require.NoError(t, audit.WriteChain(&buf, chain))
		v := audit.NewVerifier(&buf, audit.VerifyOptions{})
		var tally figures.Tally
		for r := range v.All() {
			tally.Add(r)
		}
		require.NoError(t, v.Err())
		got := tally.Report(figures.DefaultRubberStampRule())
		assert.Equal(t, want, got, "set %d", i)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		var back figures.Report
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, got, back, "set %d: the JSON holds every figure", i)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

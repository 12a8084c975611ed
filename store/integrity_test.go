package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// rehash gives r a hash of its own content.
func rehash(t testing.TB, r audit.Record) audit.Record {
	h, err := r.ComputeHash()
	require.NoError(t, err)
	r.Hash = h
	return r
}

func TestCheckRead(t *testing.T) {
	chain := audittest.Chain(6, t0)
	require.NoError(t, store.CheckRead(chain))
	require.NoError(t, store.CheckRead(nil))
	edited := func(i int) []audit.Record {
		c := append([]audit.Record{}, chain...)
		c[i].Reason += "!"
		return c
	}
	rewritten := func(i int) []audit.Record {
		c := edited(i)
		c[i] = rehash(t, c[i])
		return c
	}
	tests := []struct {
		name    string
		records []audit.Record
		seq     int64 // the seq the error names; 0 for none
	}{
		{"edited first", edited(0), 1},
		{"edited middle", edited(3), 4},
		{"edited last", edited(5), 6},
		{"rewritten middle breaks the next link", rewritten(2), 4},
		{"rewritten last, alone", rewritten(5), 0},
		{"rewritten, read without the next", rewritten(2)[:3], 0},
		{"a window", chain[2:5], 0},
		{"rows of one task, not consecutive", []audit.Record{chain[0], chain[2], chain[4]}, 0},
		{"not consecutive, one edited", []audit.Record{chain[0], edited(2)[2], chain[4]}, 3},
		{"not UTF-8", func() []audit.Record { c := edited(1); c[1].Reason = "\xff"; return c }(), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := store.CheckRead(tt.records)
			if tt.seq == 0 {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, store.ErrCorrupt)
			assert.Contains(t, err.Error(), fmt.Sprintf("audit seq %d:", tt.seq))
			assert.NotContains(t, err.Error(), "!", "the error never quotes the row")
		})
	}
}

func TestCheckHead(t *testing.T) {
	chain := audittest.Chain(3, t0)
	assert.NoError(t, store.CheckHead(audit.Record{}, nil, 0), "an empty chain")
	assert.NoError(t, store.CheckHead(chain[0], nil, 1))
	assert.NoError(t, store.CheckHead(chain[2], &chain[1], 3))
	bad := chain[2]
	bad.Reason += "x"
	for name, err := range map[string]error{
		"edited":                 store.CheckHead(bad, &chain[1], 3),
		"not the row at its seq": store.CheckHead(chain[1], nil, 3),
		"a gap before it":        store.CheckHead(chain[2], &chain[0], 3),
		"rows but no head":       store.CheckHead(audit.Record{}, nil, 3),
		"first links to before": store.CheckHead(rehash(t, func() audit.Record {
			r := chain[0]
			r.PrevHash = canon.Digest{1}
			return r
		}()), nil, 1),
		"rewritten, next to its prev": store.CheckHead(chain[2], func() *audit.Record {
			r := rehash(t, func() audit.Record { r := chain[1]; r.Reason += "x"; return r }())
			return &r
		}(), 3),
	} {
		assert.ErrorIs(t, err, store.ErrCorrupt, name)
	}
}

func TestDamage(t *testing.T) {
	var d store.Damage
	require.NoError(t, d.Err(), "the zero value is undamaged")
	other := errors.New("disk full")
	assert.Equal(t, other, d.Note(other), "Note passes errors through")
	assert.NoError(t, d.Err(), "only damage is remembered")
	assert.NoError(t, d.Note(nil))

	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = d.Note(store.CorruptRow("audit", fmt.Sprint(i), "bad"))
			_ = d.Err()
		}()
	}
	wg.Wait()
	err := d.Err()
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Regexp(t, `first damage: audit row \d+: bad\)$`, err.Error())
	first := err.Error()
	_ = d.Note(store.CorruptRow("audit", "999", "later"))
	assert.Equal(t, first, d.Err().Error(), "the first damage is kept")
}

func TestReportAdd(t *testing.T) {
	var r store.Report
	assert.False(t, r.Damaged())
	for seq := int64(5); seq <= 9; seq++ {
		r.Add(store.Problem{Table: "audit", FromSeq: seq, ToSeq: seq, What: "content does not match its hash"})
	}
	r.Add(store.Problem{Table: "audit", FromSeq: 11, ToSeq: 11, What: "content does not match its hash"})
	r.Add(store.Problem{Table: "audit", FromSeq: 12, ToSeq: 12, What: "records are missing"})
	r.Add(store.Problem{Table: "approvals", Key: "t1", What: "its effect does not match its digest"})
	require.Len(t, r.Problems, 4, "a run of one damage is one problem")
	assert.Equal(t, store.Problem{Table: "audit", FromSeq: 5, ToSeq: 9, What: "content does not match its hash"}, r.Problems[0])
	assert.True(t, r.Damaged())
	summary := r.Summary()
	for _, want := range []string{"DAMAGED: 4 problems", "audit seq 5-9: content does not match its hash", "audit seq 11:",
		"approvals row t1:", "what to do", "restore the newest backup", "reconcile"} {
		assert.Contains(t, summary, want)
	}

	var big store.Report
	for i := range 3 * store.MaxProblems {
		big.Add(store.Problem{Table: "audit", FromSeq: int64(2 * (i + 1)), ToSeq: int64(2 * (i + 1)), What: "x"})
	}
	assert.Len(t, big.Problems, store.MaxProblems, "bounded")
	assert.True(t, big.Truncated)
	assert.Contains(t, big.Summary(), "more problems than")
}

// TestChainCheck: the streaming check finds what VerifyChain finds, and
// says where, for each kind of damage.
func TestChainCheck(t *testing.T) {
	chain := audittest.Chain(10, t0)
	run := func(recs []audit.Record) store.Report {
		var r store.Report
		c := store.NewChainCheck(&r)
		for _, rec := range recs {
			c.Record(rec)
		}
		return r
	}
	r := run(chain)
	assert.False(t, r.Damaged())
	assert.Equal(t, int64(10), r.Records)
	assert.Equal(t, int64(10), r.HeadSeq)
	assert.Equal(t, chain[9].Hash.String(), r.HeadHash)

	missing := append(append([]audit.Record{}, chain[:3]...), chain[6:]...)
	r = run(missing)
	require.Len(t, r.Problems, 1)
	assert.Equal(t, store.Problem{Table: "audit", FromSeq: 4, ToSeq: 6, What: "records are missing"}, r.Problems[0])

	r = run(chain[2:])
	assert.Equal(t, int64(1), r.Problems[0].FromSeq, "a chain cut from its start is missing its first records")

	swapped := append([]audit.Record{}, chain...)
	swapped[4], swapped[5] = swapped[5], swapped[4]
	assert.True(t, run(swapped).Damaged())

	var u store.Report
	c := store.NewChainCheck(&u)
	c.Record(chain[0])
	c.Unreadable(2, "the record does not parse")
	c.Record(chain[2]) // its link cannot be checked
	require.Len(t, u.Problems, 1)
	assert.Equal(t, int64(2), u.Problems[0].FromSeq)
}

// FuzzChainCheck mutates a chain as the fuzzer says (edit, rewrite,
// drop, swap, duplicate records) and checks that the streaming check
// reports damage exactly when audit.VerifyChain refuses the result,
// within bounded problems and without a panic.
func FuzzChainCheck(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3})
	f.Add([]byte{1, 9, 2, 4, 3, 1, 4, 7})
	chain := audittest.Chain(12, t0)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		recs := append([]audit.Record{}, chain...)
		for i := 0; i+1 < len(ops) && len(recs) > 0; i += 2 {
			at := int(ops[i+1]) % len(recs)
			switch ops[i] % 5 {
			case 0:
				recs[at].Reason += "x"
			case 1:
				recs[at].Reason += "y"
				recs[at] = rehash(t, recs[at])
			case 2:
				recs = append(recs[:at:at], recs[at+1:]...)
			case 3:
				if at+1 < len(recs) {
					recs[at], recs[at+1] = recs[at+1], recs[at]
				}
			case 4:
				recs = append(recs[:at+1:at+1], recs[at:]...)
			}
		}
		var r store.Report
		c := store.NewChainCheck(&r)
		for _, rec := range recs {
			c.Record(rec)
		}
		intact := audit.VerifyChain(recs, canon.Digest{}) == nil
		assert.Equal(t, !intact, r.Damaged(), "ops %v", ops)
		assert.LessOrEqual(t, len(r.Problems), store.MaxProblems)
		assert.Equal(t, int64(len(recs)), r.Records)
	})
}

// BenchmarkCheckRecord measures what checking one record read back costs
// every read and every append: one hash of its canonical form.
func BenchmarkCheckRecord(b *testing.B) {
	chain := audittest.Chain(2, t0)
	for b.Loop() {
		if err := store.CheckRecord(chain[1], &chain[0]); err != nil {
			b.Fatal(err)
		}
	}
}

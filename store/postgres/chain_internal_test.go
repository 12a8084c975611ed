package postgres

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// joinCut does in Go what queryAppend does in SQL: it joins the cut form
// (the first four arguments of queryAppend) around seq, prev and at, and
// hashes it.
func joinCut(args []any, seq int64, prev canon.Digest, at int64) canon.Digest {
	var b []byte
	b = append(b, args[0].([]byte)...)
	b = append(b, prev.String()...)
	b = append(b, args[1].([]byte)...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, args[2].([]byte)...)
	b = strconv.AppendInt(b, at, 10)
	b = append(b, args[3].([]byte)...)
	return sha256.Sum256(b)
}

// checkCut cuts r and checks that the database's join of the pieces, for
// the given head values, hashes to what ComputeHash gives the record with
// those values.
func checkCut(t *testing.T, r audit.Record, seq int64, prev canon.Digest, at int64) {
	t.Helper()
	rec, args, err := cutRecord(r)
	if err != nil {
		_, want := store.ChainNext(audit.Record{}, r, t0())
		require.Error(t, want, "cutRecord refuses only what ChainNext refuses: %v", err)
		return
	}
	rec.Seq, rec.PrevHash, rec.Time = seq, prev, at
	want, err := rec.ComputeHash()
	require.NoError(t, err)
	assert.Equal(t, want, joinCut(args, seq, prev, at))
}

// cutRecords generates records whose text and arguments try to confuse
// the cut: keys named like the placeholders' at any depth of Args, digits
// and hex in every text field, escapes, non-ASCII text, empty and nil
// lists; with nul, NUL characters too (which PostgreSQL cannot store).
func cutRecords(rng *rand.Rand, n int, nul bool) []audit.Record {
	texts := []string{"", "seq", `"seq":1`, `"time":0`, `"prev_hash":"00"`, "\u00e9\u4e2d\U0001F600", `a\"b`,
		"\t\n\u2028", "0123456789abcdef", strings.Repeat("9", 40), "<script>"}
	if nul {
		texts = append(texts, "\u0000")
	}
	text := func() string { return texts[rng.IntN(len(texts))] + texts[rng.IntN(len(texts))] }
	argsOf := []string{"", `{"seq":1,"time":2,"prev_hash":"x"}`, `{"a":{"seq":{"time":[1,2,{"prev_hash":null}]}}}`,
		`[1e3, -0, 0.1, 12345678901234567890]`, `"\u00e9"`, `{"z":1,"a":[true,false,null]}`, `{"amount": 5}`}
	out := make([]audit.Record, n)
	for i := range out {
		r := storetest.Record(text(), storetest.TicketAt("s", "u", i, t0()).CreatedAt)
		r.TicketID, r.Step, r.Session, r.Reason, r.Result = text(), text(), text(), text(), text()
		r.Approver, r.Nonce, r.CardHash, r.IdempotencyKey = text(), text(), text(), text()
		r.DecisionMillis = rng.Int64N(1 << 40)
		if a := argsOf[rng.IntN(len(argsOf))]; a != "" {
			r.Args = json.RawMessage(a)
		}
		switch rng.IntN(3) {
		case 0:
			r.Taint = nil
		case 1:
			r.Taint = []string{}
		default:
			r.Taint = []string{text(), text()}
		}
		if rng.IntN(2) == 0 {
			r.Principal.Delegations = []string{text()}
		}
		out[i] = r
	}
	return out
}

// t0 is a fixed creation time for generated records.
func t0() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// TestCutRecord: for records built to confuse it, the pieces the database
// joins around the head's values hash to exactly what ComputeHash gives,
// for seqs and times of every length.
func TestCutRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i, r := range cutRecords(rng, 500, true) {
		var prev canon.Digest
		for j := range prev {
			prev[j] = byte(rng.IntN(256))
		}
		seq := []int64{1, 9, 10, 1 << 20, 1<<53 - 1}[i%5]
		at := []int64{0, 1, 1767225600000, 1<<53 - 1}[i%4]
		checkCut(t, r, seq, prev, at)
	}
}

// FuzzCutRecord checks the cut against ComputeHash for arbitrary text and
// arguments.
func FuzzCutRecord(f *testing.F) {
	f.Add("reason", `{"seq":1}`, int64(1), int64(1767225600000))
	f.Add(`"time":0`, `[1,"prev_hash"]`, int64(1<<40), int64(0))
	f.Add("\xff", ``, int64(7), int64(7))
	f.Fuzz(func(t *testing.T, reason, args string, seq, at int64) {
		if seq < 1 || at < 0 || seq >= 1<<53 || at >= 1<<53 {
			t.Skip()
		}
		r := storetest.Record("task", t0())
		r.Reason = reason
		if args != "" {
			r.Args = json.RawMessage(args)
		}
		checkCut(t, r, seq, canon.Sum([]byte(reason)), at)
	})
}

// TestChainedByDatabase appends the generated records through the store,
// some alone and some with decisions, from several goroutines, and checks
// that the chain the database made verifies with audit.VerifyChain:
// the database hashed what ComputeHash hashes.
func TestChainedByDatabase(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	ctx := t.Context()
	recs := cutRecords(rand.New(rand.NewPCG(5, 6)), 200, false)
	errs := make(chan error, len(recs))
	for g := range 4 {
		go func() {
			for i := g; i < len(recs); i += 4 {
				_, err := s.AppendAudit(ctx, recs[i])
				if err != nil {
					_, want := store.ChainNext(audit.Record{}, recs[i], t0())
					if want == nil {
						err = fmt.Errorf("record %d: %w", i, err)
					} else {
						err = nil // refused by the chain's own rules too
					}
				}
				errs <- err
			}
		}()
	}
	for range recs {
		require.NoError(t, <-errs)
	}
	all, err := s.AuditSeq(ctx, 1, 1<<40)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	require.NoError(t, audit.VerifyChain(all, canon.Digest{}))
	for i := 1; i < len(all); i++ {
		assert.GreaterOrEqual(t, all[i].Time, all[i-1].Time)
	}
}

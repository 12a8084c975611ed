package audit_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

var chainStart = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// relink recomputes the hashes of records from index i on, as an attacker
// rewriting the tail of the log would.
func relink(t *testing.T, records []audit.Record, i int) {
	t.Helper()
	for ; i < len(records); i++ {
		if i > 0 {
			records[i].PrevHash = records[i-1].Hash
		}
		h, err := records[i].ComputeHash()
		require.NoError(t, err)
		records[i].Hash = h
	}
}

func TestVerifyChainFindsFirstBreak(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, c []audit.Record) []audit.Record
		index  int // first break, -1 for none
	}{
		{"intact", func(t *testing.T, c []audit.Record) []audit.Record { return c }, -1},
		{"edited row", func(t *testing.T, c []audit.Record) []audit.Record {
			c[4].Decision = audit.DecisionAllow
			return c
		}, 4},
		{"edited row, its hash recomputed", func(t *testing.T, c []audit.Record) []audit.Record {
			c[4].Approver = "user:mallory"
			h, err := c[4].ComputeHash()
			require.NoError(t, err)
			c[4].Hash = h
			return c
		}, 5},
		{"deleted row", func(t *testing.T, c []audit.Record) []audit.Record { return slices.Delete(c, 3, 4) }, 3},
		{"deleted row, renumbered", func(t *testing.T, c []audit.Record) []audit.Record {
			c = slices.Delete(c, 3, 4)
			for i := 3; i < len(c); i++ {
				c[i].Seq--
			}
			return c
		}, 3},
		{"inserted row", func(t *testing.T, c []audit.Record) []audit.Record {
			ins := c[2]
			ins.Seq, ins.Decision = 3, audit.DecisionApproved
			return slices.Insert(c, 2, ins)
		}, 3},
		{"inserted row with correct links", func(t *testing.T, c []audit.Record) []audit.Record {
			ins := c[2]
			ins.Seq, ins.PrevHash, ins.Decision = 3, c[1].Hash, audit.DecisionApproved
			h, err := ins.ComputeHash()
			require.NoError(t, err)
			ins.Hash = h
			return slices.Insert(c, 2, ins)
		}, 3},
		{"reordered rows", func(t *testing.T, c []audit.Record) []audit.Record {
			c[6], c[7] = c[7], c[6]
			return c
		}, 6},
		{"reordered rows, renumbered", func(t *testing.T, c []audit.Record) []audit.Record {
			c[6], c[7] = c[7], c[6]
			c[6].Seq, c[7].Seq = 7, 8
			return c
		}, 6},
		{"edited arguments digest", func(t *testing.T, c []audit.Record) []audit.Record {
			c[9].ArgsDigest[0] ^= 1
			return c
		}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.tamper(t, audittest.Chain(12, chainStart))
			err := audit.VerifyChain(c, canon.Digest{})
			if tt.index < 0 {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, audit.ErrChainBroken)
			var b *audit.ChainBreak
			require.ErrorAs(t, err, &b)
			assert.Equal(t, tt.index, b.Index)
			assert.Equal(t, c[tt.index].Seq, b.Seq)
		})
	}
}

// TestVerifyChainRewrittenTail shows what a chain alone cannot catch: an
// attacker who rewrites every hash after an edit. Only the head hash kept
// elsewhere (the store's AuditHead, or a copy given to an auditor) exposes
// it.
func TestVerifyChainRewrittenTail(t *testing.T) {
	c := audittest.Chain(12, chainStart)
	head := c[len(c)-1].Hash
	c[4].Decision = audit.DecisionApproved
	relink(t, c, 4)
	assert.NoError(t, audit.VerifyChain(c, canon.Digest{}))
	assert.False(t, c[len(c)-1].Hash.Equal(head), "the head hash moved")
}

func TestVerifyChainWindowAndAnchor(t *testing.T) {
	c := audittest.Chain(12, chainStart)
	window := c[5:]
	var b *audit.ChainBreak
	require.ErrorAs(t, audit.VerifyChain(window, canon.Digest{}), &b, "a window without an anchor is refused")
	assert.Equal(t, 0, b.Index)
	assert.Contains(t, b.Why, "does not start at the first record")
	assert.NoError(t, audit.VerifyChain(window, c[4].Hash), "a window links to its anchor")
	err := audit.VerifyChain(window, c[3].Hash)
	require.ErrorAs(t, err, &b)
	assert.Equal(t, 0, b.Index)
}

func TestWriteReadChainRoundTrip(t *testing.T) {
	c := audittest.Chain(20, chainStart)
	c[3].Args = []byte(`{"to":"finance@example.com"}`)
	relink(t, c, 3)
	var buf bytes.Buffer
	require.NoError(t, audit.WriteChain(&buf, c))
	assert.Equal(t, 20, strings.Count(buf.String(), "\n"), "one record per line")
	got, err := audit.ReadChain(&buf)
	require.NoError(t, err)
	require.Len(t, got, 20)
	assert.NoError(t, audit.VerifyChain(got, canon.Digest{}))
	assert.Equal(t, c[7].Hash, got[7].Hash)
}

func TestReadChainIsStrict(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, audit.WriteChain(&buf, audittest.Chain(3, chainStart)))
	good := buf.String()
	lines := strings.SplitAfter(good, "\n")
	tests := []struct {
		name string
		doc  string
		line string
	}{
		{"unknown field", strings.Replace(good, `{"seq":2`, `{"x":1,"seq":2`, 1), "line 2"},
		{"duplicate key", strings.Replace(good, `{"seq":3`, `{"seq":3,"seq":3`, 1), "line 3"},
		{"blank line", lines[0] + "\n" + lines[1], "line 2"},
		{"not JSON", lines[0] + "seq=2\n", "line 2"},
		{"bad digest", strings.Replace(good, `"prev_hash":"`, `"prev_hash":"zz`, 1), "line 1"},
		{"too long", `{"reason":"` + strings.Repeat("a", audit.MaxLine) + `"}`, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := audit.ReadChain(strings.NewReader(tt.doc))
			require.ErrorIs(t, err, audit.ErrMalformed)
			assert.Contains(t, err.Error(), tt.line)
		})
	}
	got, err := audit.ReadChain(strings.NewReader(""))
	assert.NoError(t, err)
	assert.Empty(t, got)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteChainReportsWriteErrors(t *testing.T) {
	assert.Error(t, audit.WriteChain(failWriter{}, audittest.Chain(2, chainStart)))
}

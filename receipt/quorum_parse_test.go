package receipt_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// TestParseQuorumRefusesRepeatedMembers: each member of a quorum given
// twice, whichever copy comes first and wherever they sit, is refused, as
// Parse refuses a repeated member of a receipt: readers that keep the
// first and readers that keep the last would see different quorums.
func TestParseQuorumRefusesRepeatedMembers(t *testing.T) {
	q := quorumOf(t, signers(t, 2)...)
	r0, err := q.Receipts[0].Marshal()
	require.NoError(t, err)
	r1, err := q.Receipts[1].Marshal()
	require.NoError(t, err)
	values := map[string][2]string{
		"format":   {`"asu.quorum.v1"`, `"asu.quorum.v2"`},
		"needed":   {`2`, `16`},
		"receipts": {fmt.Sprintf("[%s,%s]", r0, r1), fmt.Sprintf("[%s]", r1)},
	}
	names := []string{"format", "needed", "receipts"}
	for _, dup := range names {
		for _, order := range [][2]int{{0, 1}, {1, 0}, {0, 0}} {
			for at := range names {
				var members []string
				for _, n := range names {
					if n != dup {
						members = append(members, fmt.Sprintf("%q:%s", n, values[n][0]))
					}
				}
				first := fmt.Sprintf("%q:%s", dup, values[dup][order[0]])
				second := `"` + dup + `":` + values[dup][order[1]]
				members = append(members[:min(at, len(members))], append([]string{first}, members[min(at, len(members)):]...)...)
				members = append(members, second)
				doc := "{" + strings.Join(members, ",") + "}"
				t.Run(fmt.Sprintf("%s/%v/at%d", dup, order, at), func(t *testing.T) {
					_, err := receipt.ParseQuorum([]byte(doc))
					if order[0] == 0 {
						assert.ErrorIs(t, err, receipt.ErrMalformed, "the repeat is what is refused")
					} else {
						assert.Error(t, err)
					}
				})
			}
		}
	}
	good := fmt.Sprintf(`{"receipts":[%s,%s], "needed":2,
		"format":"asu.quorum.v1"}`, r0, r1)
	_, err = receipt.ParseQuorum([]byte(good))
	require.NoError(t, err, "members in any order, with white space")
	for name, bad := range map[string]string{
		"a member in another case": strings.Replace(good, `"needed"`, `"Needed"`, 1),
		"data after the object":    good + ` {}`,
		"a second object":          good + good,
		"receipts not a list":      strings.Replace(good, `"receipts":[`, `"receipts":{"r":[`, 1),
		"needed as text":           strings.Replace(good, `"needed":2`, `"needed":"2"`, 1),
		"needed as a fraction":     strings.Replace(good, `"needed":2`, `"needed":2.0`, 1),
		"format not a string":      strings.Replace(good, `"format":"asu.quorum.v1"`, `"format":1`, 1),
	} {
		_, err := receipt.ParseQuorum([]byte(bad))
		assert.Error(t, err, name)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// quorumShapes build, at about n bytes, quorums ParseQuorum must refuse in
// memory linear in their size.
var quorumShapes = map[string]func(n int) string{
	"many zeros": func(n int) string { return head + list("0", n) + `]}` },
	"many lists": func(n int) string { return head + list("[]", n) + `]}` },
	"many objects": func(n int) string {
		return head + list("{}", n) + `]}`
	},
	"many strings": func(n int) string { return head + list(`""`, n) + `]}` },
	"seventeen large": func(n int) string {
		return head + list(`"`+strings.Repeat("x", n/18)+`"`, n) + `]}`
	},
	"long format": func(n int) string {
		return `{"format":"` + strings.Repeat(`\u0041`, n/6) + `","needed":1,"receipts":[]}`
	},
	"unknown member": func(n int) string { return `{"x":[` + list("0", n) + `]}` },
	"deep element": func(n int) string {
		return head + strings.Repeat("[", n/2) + strings.Repeat("]", n/2) + `]}`
	},
	"white space": func(n int) string { return head + strings.Repeat(" ", n) + `0,0]}` },
	"many members": func(n int) string {
		return `{"format":"asu.quorum.v1"` + strings.Repeat(`,"needed":1`, n/11) + `}`
	},
}

const head = `{"format":"asu.quorum.v1","needed":1,"receipts":[`

// list returns about n bytes of elem, comma-separated.
func list(elem string, n int) string {
	k := max(n/(len(elem)+1), 1)
	return strings.Repeat(elem+",", k-1) + elem
}

// TestParseQuorumMemoryIsBounded: ParseQuorum refuses a quorum of more
// than MaxQuorumReceipts receipts, or of any other wrong shape, having
// allocated no more at 8n bytes of input than at n, and under 512 KiB: it
// reads the quorum in place and counts the receipts as it comes to them,
// rather than decoding every element of a long list first. The bytes are
// counted, not timed.
func TestParseQuorumMemoryIsBounded(t *testing.T) {
	for name, shape := range quorumShapes {
		t.Run(name, func(t *testing.T) {
			var allocs []uint64
			for _, n := range []int{256 << 10, 2 << 20} {
				doc := []byte(shape(n))
				var err error
				alloc := allocated(func() { _, err = receipt.ParseQuorum(doc) })
				require.Error(t, err)
				assert.LessOrEqual(t, alloc, uint64(512<<10), "%d bytes of input: %.2f bytes allocated per byte",
					len(doc), float64(alloc)/float64(len(doc)))
				allocs = append(allocs, alloc)
			}
			assert.LessOrEqual(t, allocs[1], allocs[0]+16<<10, "allocated at n and 8n: %v", allocs)
		})
	}
}

// TestParseQuorumReadsEveryReceiptItHolds: the streamed reader keeps
// every receipt of a quorum, up to MaxQuorumReceipts.
func TestParseQuorumReadsEveryReceiptItHolds(t *testing.T) {
	first := sign(t, newSigner(t, receipttest.EdDSA))
	q := &receipt.Quorum{Format: receipt.QuorumFormatV1, Needed: 1}
	for range receipt.MaxQuorumReceipts {
		q.Receipts = append(q.Receipts, first)
	}
	raw, err := q.Marshal()
	require.NoError(t, err)
	back, err := receipt.ParseQuorum(raw)
	require.NoError(t, err)
	assert.Len(t, back.Receipts, receipt.MaxQuorumReceipts)
	q.Receipts = append(q.Receipts, first)
	raw, err = q.Marshal()
	require.NoError(t, err)
	_, err = receipt.ParseQuorum(raw)
	assert.ErrorIs(t, err, receipt.ErrFormat)
}

package mcpgate

import (
	"bytes"
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultSlot carries the upstream's decoded answer from the executor back
// to the proxy's call that ran it, through the context Execute passes
// down: the proxy then hands the host the result the upstream sent
// instead of decoding the bytes the executor had just encoded from it.
// A result that did not come through the slot (another executor, a
// stored outcome) is decoded as before.
type resultSlot struct {
	out []byte
	res *mcp.CallToolResult
}

type resultSlotKey struct{}

// withResultSlot returns ctx carrying a fresh slot.
func withResultSlot(ctx context.Context) (context.Context, *resultSlot) {
	s := &resultSlot{}
	return context.WithValue(ctx, resultSlotKey{}, s), s
}

// fill records res, encoded as out, in ctx's slot, if it has one. Only the
// first answer counts: a call runs its executor once.
func fill(ctx context.Context, out []byte, res *mcp.CallToolResult) {
	if s, ok := ctx.Value(resultSlotKey{}).(*resultSlot); ok && s.res == nil {
		s.out, s.res = out, res
	}
}

// result returns the decoded answer whose encoding is output, if the
// executor left it here.
func (s *resultSlot) result(output []byte) (*mcp.CallToolResult, bool) {
	if s.res == nil || !bytes.Equal(s.out, output) {
		return nil, false
	}
	return s.res, true
}

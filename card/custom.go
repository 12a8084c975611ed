package card

import (
	"fmt"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card/internal/escape"
)

// Line is one line of a custom card's arguments: a label and the value
// shown beside it, both the renderer's own words (a localized "Betrag",
// "12,50 € an Dana").
type Line struct {
	Label string
	Value string
}

// MaxCustomID bounds the renderer ID a custom card names.
const MaxCustomID = 64

// Custom builds the card of the sealed effect s for a renderer of one's
// own (a localized or branded card): the card's frame is this package's,
// from s and the trusted parts of ctx (the tool, who the call runs on
// behalf of, the policy's reasons and approvers, the effect's fingerprint,
// its references, and the agent's text only in the region labelled
// untrusted), and its arguments region shows lines, in order, instead of
// one field per argument. Labels and values are escaped as any card text
// is. The card JSON names rendererID as its renderer, so its hash, which
// the approval challenge commits to, covers which rules drew it.
//
// What the card shows is what is signed: a gate hashes the card Custom
// returns, and an approver's passkey signs that hash. That the lines
// describe the effect faithfully, every argument that matters and two
// different effects never alike, is the custom renderer's to keep (P4);
// the fingerprint of the effect's digest is on every card all the same.
//
// rendererID must be printable ASCII of 1 to [MaxCustomID] bytes and not
// [RendererID], or Custom fails with [ErrBadContext]; it fails as
// [Renderer.RenderSealed] does otherwise.
func Custom(rendererID string, s canon.Sealed, ctx Context, lines []Line) (*Card, error) {
	if err := checkCustomID(rendererID); err != nil {
		return nil, err
	}
	base, err := Renderer{}.RenderSealed(s, ctx)
	if err != nil {
		return nil, err
	}
	m := base.m
	m.Renderer = rendererID
	m.memos = 0
	label := escape.Escaper{Quote: true}
	value := escape.Escaper{Quote: true, Prose: true}
	m.Args = make([]field, 0, len(lines))
	source := base.source
	for _, l := range lines {
		m.Args = append(m.Args, field{Name: label.Show(l.Label), Value: stringNode(value.Show(l.Value))})
		source += len(l.Label) + len(l.Value)
	}
	c, err := seal(m)
	if err != nil {
		return nil, err
	}
	c.source = source
	return c, nil
}

func checkCustomID(id string) error {
	if id == "" || len(id) > MaxCustomID || id == RendererID {
		return fmt.Errorf("%w: a custom renderer ID is 1 to %d bytes and not %q", ErrBadContext, MaxCustomID, RendererID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return fmt.Errorf("%w: a custom renderer ID is printable ASCII without spaces", ErrBadContext)
		}
	}
	return nil
}

package card

import (
	"strconv"

	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
)

// The card JSON is written by hand rather than by encoding/json: it is the
// largest part of rendering a big effect, and reflection made it several
// times slower. Members are written in RFC 8785 order (sorted names), so
// the output is canonical as written; a test checks it against
// encoding/json and against canon's canonicalization. Names are those of
// the model's struct tags.

type jsonWriter struct {
	// b is the room written into, b[:n] written so far. The writer
	// writes by index and stores no slice as it goes, so writing costs no
	// write barrier while the collector runs.
	b     []byte
	limit int // past this many bytes the card is refused: the writer stops
	// written[k] is where the node with memo k+1 was first written.
	written []span
	// counting says the writer only counts the bytes it would write, in
	// n: encodeModel counts first, so the card JSON is written once, into
	// room of its exact size, rather than into a buffer regrown and copied.
	counting bool
	n        int
}

// span is a part of the card JSON written: b[start:end].
type span struct{ start, end int }

// len returns the number of bytes written (or counted) so far.
func (w *jsonWriter) len() int { return w.n }

// room makes sure b has room for k more bytes. The room encodeModel
// gives is exact, so this only grows b for a writer given none.
func (w *jsonWriter) room(k int) {
	if len(w.b)-w.n < k {
		b := make([]byte, max(2*len(w.b), w.n+k, 64))
		copy(b, w.b[:w.n])
		w.b = b
	}
}

func (w *jsonWriter) raw(s string) {
	if w.counting {
		w.n += len(s)
		return
	}
	if len(w.b)-w.n < len(s) {
		w.room(len(s))
	}
	w.n += copy(w.b[w.n:], s)
}

// esc2 writes a backslash and c.
func (w *jsonWriter) esc2(c byte) {
	w.room(2)
	w.b[w.n], w.b[w.n+1] = '\\', c
	w.n += 2
}

// over reports output past the limit: what is written after it is
// thrown away, so the writer stops writing nodes.
func (w *jsonWriter) over() bool { return w.len() > w.limit }

// strLen is the length of s written by str.
func strLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// str writes a JSON string the way RFC 8785 does: only '"', '\' and
// control characters are escaped.
func (w *jsonWriter) str(s string) {
	if w.counting {
		w.n += strLen(s)
		return
	}
	// Room for s with no escapes, and its quotes; an escape makes more.
	w.room(len(s) + 2)
	w.b[w.n] = '"'
	w.n++
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.raw(s[start:i])
		switch c {
		case '"', '\\':
			w.esc2(c)
		case '\b':
			w.esc2('b')
		case '\f':
			w.esc2('f')
		case '\n':
			w.esc2('n')
		case '\r':
			w.esc2('r')
		case '\t':
			w.esc2('t')
		default:
			const hex = "0123456789abcdef"
			w.raw(`\u00`)
			w.room(2)
			w.b[w.n], w.b[w.n+1] = hex[c>>4], hex[c&0xf]
			w.n += 2
		}
		start = i + 1
	}
	w.raw(s[start:])
	w.room(1)
	w.b[w.n] = '"'
	w.n++
}

func (w *jsonWriter) int(n int64) {
	var buf [20]byte
	w.raw(string(strconv.AppendInt(buf[:0], n, 10)))
}

func (w *jsonWriter) strs(list []string) {
	w.raw("[")
	for i, s := range list {
		if i > 0 {
			w.raw(",")
		}
		w.str(s)
	}
	w.raw("]")
}

func (w *jsonWriter) shown(s escape.Shown) {
	w.raw("{")
	if len(s.Flags) > 0 {
		w.raw(`"flags":`)
		w.strs(s.Flags)
		w.raw(",")
	}
	w.raw(`"text":`)
	w.str(s.Text)
	w.raw("}")
}

func (w *jsonWriter) shownList(list []escape.Shown) {
	w.raw("[")
	for i := range list {
		if i > 0 {
			w.raw(",")
		}
		w.shown(list[i])
	}
	w.raw("]")
}

func (w *jsonWriter) long(l *longPart) {
	w.raw(`{"bytes":`)
	w.int(int64(l.Bytes))
	w.raw(`,"full":`)
	w.str(l.Full)
	w.raw(`,"sha256":`)
	w.str(l.SHA256)
	w.raw("}")
}

func (w *jsonWriter) domains(list []host.Domain) {
	w.raw("[")
	for i := range list {
		d := &list[i]
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"ascii":`)
		w.str(d.ASCII)
		if d.LooksLike != "" {
			w.raw(`,"looks_like":`)
			w.str(d.LooksLike)
		}
		if d.Registrable != "" {
			w.raw(`,"registrable":`)
			w.str(d.Registrable)
		}
		if d.Scripts != "" {
			w.raw(`,"scripts":`)
			w.str(d.Scripts)
		}
		if d.Trusted {
			w.raw(`,"trusted":true`)
		}
		if d.Unicode != "" {
			w.raw(`,"unicode":`)
			w.str(d.Unicode)
		}
		if len(d.Warnings) > 0 {
			w.raw(`,"warnings":`)
			w.strs(d.Warnings)
		}
		w.raw(`,"written":`)
		w.shown(d.Written)
		w.raw("}")
	}
	w.raw("]")
}

// node writes a node; a copy of a node written before is copied from
// where it was written.
func (w *jsonWriter) node(n *node) {
	if w.counting && n.size > 0 {
		w.n += int(n.size) // counted when the node was built
		return
	}
	if n.memo() <= 0 || n.memo() > int32(len(w.written)) {
		w.nodeBody(n)
		return
	}
	sp := &w.written[n.memo()-1]
	if sp.end > 0 {
		if w.counting {
			w.n += sp.end - sp.start
		} else {
			w.room(sp.end - sp.start)
			w.n += copy(w.b[w.n:], w.b[sp.start:sp.end])
		}
		return
	}
	start := w.len()
	w.nodeBody(n)
	*sp = span{start, w.len()}
}

// leafHeads are what the card JSON of a scalar node with no domains,
// flags or long form (most nodes) starts with, by kind, up to its text.
var leafHeads = [...]string{kindNull: `{"kind":"null","text":`, kindString: `{"kind":"string","text":`,
	kindNumber: `{"kind":"number","text":`, kindBool: `{"kind":"bool","text":`, kindObject: `{"kind":"object","text":`,
	kindArray: `{"kind":"array","text":`}

// commaLeafHeads are leafHeads after the comma that separates items.
var commaLeafHeads = func() (hs [len(leafHeads)]string) {
	for k, h := range leafHeads {
		hs[k] = "," + h
	}
	return hs
}()

// itemsTails end the card JSON of a node with items and no text, by
// kind; membersHeads start that of a node with members and no text.
var itemsTails = [...]string{kindNull: `],"kind":"null","text":""}`, kindString: `],"kind":"string","text":""}`,
	kindNumber: `],"kind":"number","text":""}`, kindBool: `],"kind":"bool","text":""}`, kindObject: `],"kind":"object","text":""}`,
	kindArray: `],"kind":"array","text":""}`}
var membersHeads = [...]string{kindNull: `{"kind":"null","members":[`, kindString: `{"kind":"string","members":[`,
	kindNumber: `{"kind":"number","members":[`, kindBool: `{"kind":"bool","members":[`, kindObject: `{"kind":"object","members":[`,
	kindArray: `{"kind":"array","members":[`}

func (w *jsonWriter) nodeBody(n *node) {
	if w.over() {
		return
	}
	if n.more == nil && int(n.kind()) < len(leafHeads) {
		// What the general case below writes for such a node, with the
		// fixed parts at once.
		switch items, members := n.items(), n.members(); {
		case len(items) == 0 && len(members) == 0:
			w.raw(leafHeads[n.kind()])
			w.str(n.Text)
			w.raw("}")
			return
		case len(members) == 0 && n.Text == "":
			w.raw(`{"items":[`)
			for i := range items {
				it := &items[i]
				if !w.counting && it.more == nil && it.nkids == 0 && it.memo() == 0 && int(it.kind()) < len(leafHeads) && !w.over() {
					// What node writes for a plain leaf, with the
					// comma before it at once.
					if i > 0 {
						w.raw(commaLeafHeads[it.kind()])
					} else {
						w.raw(leafHeads[it.kind()])
					}
					w.str(it.Text)
					w.raw("}")
					continue
				}
				if i > 0 {
					w.raw(",")
				}
				w.node(it)
			}
			w.raw(itemsTails[n.kind()])
			return
		case len(items) == 0 && n.Text == "":
			w.raw(membersHeads[n.kind()])
			w.members(members)
			w.raw(`],"text":""}`)
			return
		}
	}
	w.raw("{")
	sep := ""
	if doms := n.domains(); len(doms) > 0 {
		w.raw(`"domains":`)
		w.domains(doms)
		sep = ","
	}
	if flags := n.flags(); len(flags) > 0 {
		w.raw(sep)
		w.raw(`"flags":`)
		w.strs(flags)
		sep = ","
	}
	if len(n.items()) > 0 {
		w.raw(sep)
		w.raw(`"items":[`)
		for i := range n.items() {
			if i > 0 {
				w.raw(",")
			}
			w.node(&n.items()[i])
		}
		w.raw("]")
		sep = ","
	}
	w.raw(sep)
	w.raw(`"kind":`)
	w.str(n.kind().String())
	if l := n.long(); l != nil {
		w.raw(`,"long":`)
		w.long(l)
	}
	if len(n.members()) > 0 {
		w.raw(`,"members":[`)
		w.members(n.members())
		w.raw("]")
	}
	w.raw(`,"text":`)
	w.str(n.Text)
	w.raw("}")
}

// members writes the members of an object, between its brackets.
func (w *jsonWriter) members(list []member) {
	for i := range list {
		m := &list[i]
		if i > 0 {
			w.raw(",")
		}
		if m.more == nil {
			// What the general case below writes for a key with no
			// flags or hosts, with the fixed parts at once.
			w.raw(`{"key":{"text":`)
			w.str(m.Key)
			w.raw(`},"value":`)
		} else {
			w.raw(`{"key":`)
			w.shown(m.key())
			if doms := m.keyDoms(); len(doms) > 0 {
				w.raw(`,"key_domains":`)
				w.domains(doms)
			}
			w.raw(`,"value":`)
		}
		w.node(&m.Value)
		w.raw("}")
	}
}

func (w *jsonWriter) refs(list []refPart) {
	w.raw("[")
	for i := range list {
		r := &list[i]
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"index":`)
		w.int(int64(r.Index))
		w.raw(`,"kind":`)
		w.shown(r.Kind)
		w.raw(`,"name":`)
		w.shown(r.Name)
		if len(r.NameDoms) > 0 {
			w.raw(`,"name_domains":`)
			w.domains(r.NameDoms)
		}
		if r.Reason != nil {
			w.raw(`,"reason":`)
			w.shown(*r.Reason)
		}
		if r.SHA256 != "" {
			w.raw(`,"sha256":`)
			w.str(r.SHA256)
		}
		w.raw(`,"size":`)
		w.int(r.Size)
		if r.Target != nil {
			w.raw(`,"target":`)
			w.shown(*r.Target)
		}
		w.raw("}")
	}
	w.raw("]")
}

func (w *jsonWriter) block(b *block) {
	w.raw("{")
	if len(b.Flags) > 0 {
		w.raw(`"flags":`)
		w.strs(b.Flags)
		w.raw(",")
	}
	if b.Long != nil {
		w.raw(`"long":`)
		w.long(b.Long)
		w.raw(",")
	}
	w.raw(`"text":`)
	w.str(b.Text)
	w.raw("}")
}

// encodeModel returns the card JSON of m, canonical as written, or
// errTooLarge when it would pass what a verifier accepts. It counts the
// bytes first and then writes them into room of that size: the same code
// does both, so the count is exact.
func encodeModel(m *model) ([]byte, error) {
	w := &jsonWriter{written: make([]span, m.memos), limit: HashLimits().MaxBytes, counting: true}
	w.model(m)
	if w.over() {
		return nil, errTooLarge
	}
	n := w.n
	*w = jsonWriter{b: make([]byte, n), written: w.written, limit: w.limit}
	clear(w.written)
	w.model(m)
	return w.b[:w.n:w.n], nil
}

// model writes the card JSON of m.
func (w *jsonWriter) model(m *model) {
	w.raw(`{"args":[`)
	for i := range m.Args {
		f := &m.Args[i]
		if i > 0 {
			w.raw(",")
		}
		w.raw("{")
		if f.Currency != nil {
			w.raw(`"currency":`)
			w.shown(*f.Currency)
			w.raw(",")
		}
		if f.Label != nil {
			w.raw(`"label":`)
			w.shown(*f.Label)
			w.raw(",")
		}
		w.raw(`"name":`)
		w.shown(f.Name)
		if len(f.NameDoms) > 0 {
			w.raw(`,"name_domains":`)
			w.domains(f.NameDoms)
		}
		if f.Role != "" {
			w.raw(`,"role":`)
			w.str(f.Role)
		}
		if f.Unit != nil {
			w.raw(`,"unit":`)
			w.shown(*f.Unit)
		}
		w.raw(`,"value":`)
		w.node(&f.Value)
		w.raw("}")
	}
	c := &m.Context
	w.raw(`],"context":{"agent":`)
	w.shown(c.Agent)
	w.raw(`,"approvers":`)
	w.shownList(c.Approvers)
	w.raw(`,"audience":`)
	w.shown(c.Audience)
	w.raw(`,"delegations":`)
	w.shownList(c.Delegations)
	w.raw(`,"policy_version":`)
	w.shown(c.PolicyVersion)
	w.raw(`,"provenance":`)
	w.shownList(c.Provenance)
	w.raw(`,"reasons":`)
	w.shownList(c.Reasons)
	if c.Step != nil {
		w.raw(`,"step":`)
		w.shown(*c.Step)
	}
	w.raw(`,"task":`)
	w.shown(c.Task)
	w.raw(`,"user":`)
	w.shown(c.User)
	w.raw(`},"digest":`)
	w.str(m.Digest)
	w.raw(`,"refs":`)
	w.refs(m.Refs)
	w.raw(`,"renderer":`)
	w.str(m.Renderer)
	w.raw(`,"tool":{"class":`)
	w.str(m.Tool.Class)
	w.raw(`,"name":`)
	w.shown(m.Tool.Name)
	w.raw(`,"title":`)
	w.shown(m.Tool.Title)
	w.raw(`},"unbound":`)
	w.refs(m.Unbound)
	w.raw(`,"untrusted":{"rationale":`)
	w.block(&m.Untrusted.Rationale)
	w.raw(`,"tool_description":`)
	w.block(&m.Untrusted.ToolDescription)
	w.raw("}}")
}

package card

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelFieldsInCanonicalOrder: seal relies on encoding/json writing
// members in RFC 8785 order, which holds when every struct of the model
// declares its fields in the order of their JSON names.
func TestModelFieldsInCanonicalOrder(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var check func(reflect.Type)
	check = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		prev := ""
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				// Bookkeeping of the render, which encoding/json skips.
				require.Empty(t, f.Tag.Get("json"), "%s.%s", ty.Name(), f.Name)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			require.NotEmpty(t, name, "%s.%s has no JSON name", ty.Name(), f.Name)
			require.Less(t, prev, name, "%s: %q declared after %q", ty.Name(), name, prev)
			prev = name
			check(f.Type)
		}
	}
	check(reflect.TypeOf(model{}))
	check(reflect.TypeOf(cardNode{}))
	check(reflect.TypeOf(cardMember{}))
	assert.Greater(t, len(seen), 8)
}

// cardNode and cardMember are the card JSON of a node and a member, as
// the format states them: what encoding/json writes for them is what
// encodeModel must write for node and member.
type cardNode struct {
	Domains []host.Domain `json:"domains,omitempty"`
	Flags   []string      `json:"flags,omitempty"`
	Items   []node        `json:"items,omitempty"`
	Kind    string        `json:"kind"`
	Long    *longPart     `json:"long,omitempty"`
	Members []member      `json:"members,omitempty"`
	Text    string        `json:"text"`
}

type cardMember struct {
	Key     escape.Shown  `json:"key"`
	KeyDoms []host.Domain `json:"key_domains,omitempty"`
	Value   node          `json:"value"`
}

// marshal is json.Marshal without HTML escaping, as the card JSON is.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

func (n node) MarshalJSON() ([]byte, error) {
	return marshal(cardNode{Domains: n.domains(), Flags: n.flags(), Items: n.items(), Kind: n.kind().String(), Long: n.long(), Members: n.members(), Text: n.Text})
}

// testNode builds a node of kind k with text, more, and the items or
// members given.
func testNode(k kind, text string, more *nodeMore, items []node, members []member) node {
	n := node{Text: text, more: more}
	switch {
	case len(items) > 0:
		n.setItems(items)
	case len(members) > 0:
		n.setMembers(members)
	}
	n.setKind(k)
	return n
}

func (m member) MarshalJSON() ([]byte, error) {
	return marshal(cardMember{Key: m.key(), KeyDoms: m.keyDoms(), Value: m.Value})
}

// TestEncodeModelMatchesEncodingJSON: the hand-written card JSON is what
// encoding/json writes for the model (struct tags name the members), and
// is canonical.
func TestEncodeModelMatchesEncodingJSON(t *testing.T) {
	step := escape.Shown{Text: "2"}
	// A string the render shared: written once, then copied.
	shared := testNode(kindString, "a@b.com", &nodeMore{Flags: []string{escape.FlagLines},
		Domains: []host.Domain{{Written: escape.Shown{Text: "b.com"}, ASCII: "b.com"}}}, nil, nil)
	shared.setMemo(1)
	m := model{memos: 1,
		Renderer: RendererID, Digest: "ab",
		Tool: toolPart{Name: escape.Shown{Text: "t", Flags: []string{escape.FlagInvisible}}, Title: escape.Shown{Text: "T"}, Class: ClassRead},
		Args: []field{{
			Name: escape.Shown{Text: "a\"b\\c\u0001"}, Label: &escape.Shown{Text: "L"}, Role: "amount", Unit: &escape.Shown{Text: "u"},
			Currency: &escape.Shown{Text: "EUR"}, NameDoms: []host.Domain{{Written: escape.Shown{Text: "w"}, ASCII: "x.com", Trusted: true}},
			Value: testNode(kindObject, "", &nodeMore{Flags: []string{escape.FlagEmpty}}, nil, []member{{
				Key: "k", more: &keyMore{flags: []string{escape.FlagSpace}, doms: []host.Domain{{Written: escape.Shown{Text: "y"}, ASCII: "y.com", Registrable: "y.com",
					Unicode: "ÿ.com", Scripts: "Latin", LooksLike: "x.com", Warnings: []string{host.WarnLookalike}}}},
				Value: testNode(kindArray, "", nil, []node{testNode(kindString, "s", &nodeMore{Long: &longPart{Bytes: 3, SHA256: "cd", Full: "sss"},
					Domains: []host.Domain{{Written: escape.Shown{Text: "z"}}}}, nil, nil), shared, shared, testNode(kindNumber, "1", nil, nil, nil),
					testNode(kindArray, "", nil, nil, nil), testNode(kindObject, "", nil, nil, nil)}, nil),
			}, {Key: "l\"", Value: testNode(kindNull, "null", nil, nil, nil)}}),
		}},
		Refs:    []refPart{{Index: 0, Name: escape.Shown{Text: "n"}, Kind: escape.Shown{Text: "file"}, SHA256: "ef", Size: 9}},
		Unbound: []refPart{{Index: 1, Name: escape.Shown{Text: "u"}, Kind: escape.Shown{Text: "url"}, Reason: &escape.Shown{Text: "r"}}},
		Context: contextPart{PolicyVersion: escape.Shown{Text: "p"}, Reasons: []escape.Shown{{Text: "r"}}, Provenance: []escape.Shown{}, Approvers: []escape.Shown{{Text: "user:u"}},
			Task: escape.Shown{Text: "t"}, Step: &step, User: escape.Shown{Text: "u"}, Agent: escape.Shown{Text: "a"}, Delegations: []escape.Shown{{Text: "d"}}, Audience: escape.Shown{Text: "x"}},
		Untrusted: untrustedPart{Rationale: block{Text: "why\n", Flags: []string{escape.FlagLines}, Long: &longPart{Bytes: 1}}},
	}
	_ = step
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(m))
	got, err := encodeModel(&m)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(buf.String(), "\n"), string(got))
	c, err := HashLimits().Canonicalize(got)
	require.NoError(t, err)
	assert.Equal(t, string(c), string(got))
}

// TestNodesAreSmall: a node is 48 bytes and a member 72 (they were 144
// and 208, then 80 and 104), so a card of a million small values holds a model a few times
// its card JSON (BenchmarkRenderShapes).
func TestNodesAreSmall(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(node{}), uintptr(48))
	assert.LessOrEqual(t, unsafe.Sizeof(member{}), uintptr(72))
}

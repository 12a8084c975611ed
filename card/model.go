package card

import (
	"unsafe"

	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
)

// model is the card: everything any view shows, already escaped. Its JSON
// (through Card.JSON) is the card a native app renders and the bytes the
// card hash covers, so every field name here is part of the card format
// "asu.card/v4"; changing one means a new renderer ID.
type model struct {
	Args      []field       `json:"args"`
	Context   contextPart   `json:"context"`
	Digest    string        `json:"digest"` // the effect digest, 64 hex
	Refs      []refPart     `json:"refs"`   // references whose content the approval binds
	Renderer  string        `json:"renderer"`
	Tool      toolPart      `json:"tool"`
	Unbound   []refPart     `json:"unbound"` // references it does not bind
	Untrusted untrustedPart `json:"untrusted"`

	memos int32 // the highest memo number of a node
	// The arguments' lines of the text view at DefaultWidth and their
	// HTML, estimated as the render built them (see textEstimate and
	// htmlEstimate), when counted.
	textRoom, htmlRoom int
	counted            bool
}

type toolPart struct {
	Class string       `json:"class"`
	Name  escape.Shown `json:"name"`  // the catalog name, from the effect
	Title escape.Shown `json:"title"` // the catalog's title (trusted)
}

// field is one top-level argument.
type field struct {
	Currency *escape.Shown `json:"currency,omitempty"` // for the amount: its currency
	Label    *escape.Shown `json:"label,omitempty"`    // the catalog's label, when it has one
	Name     escape.Shown  `json:"name"`
	NameDoms []host.Domain `json:"name_domains,omitempty"` // hosts the argument's name holds
	Role     string        `json:"role,omitempty"`         // "recipient", "amount" or "currency"
	Unit     *escape.Shown `json:"unit,omitempty"`         // the catalog's unit for a number
	Value    node          `json:"value"`
}

// kind is a node's JSON type.
type kind uint8

// Kinds of node, the JSON types.
const (
	kindNull kind = iota
	kindString
	kindNumber
	kindBool
	kindObject
	kindArray
)

// kindNames are the card JSON's names of the kinds.
var kindNames = [...]string{kindNull: "null", kindString: "string", kindNumber: "number", kindBool: "bool", kindObject: "object", kindArray: "array"}

// String returns the card JSON's name of k.
func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[kindNull]
}

// node is one JSON value of the arguments. Scalars carry Text: a string's
// escaped characters (without quotes), a number's canonical text, "true",
// "false" or "null". Objects carry Members in canonical order, arrays Items.
// In the card JSON a node is {"domains", "flags", "items", "kind", "long",
// "members", "text"}, in that order; what most nodes do not have (a
// string's domains, flags and long form) is kept apart, behind more, so a
// card of a million small values holds a million nodes of 48 bytes.
type node struct {
	Text string `json:"text"`

	// kids points to the first of nkids children: an array's items
	// (nodes) or an object's members (in canonical order), as its kind
	// says; one pointer for either keeps a node at 48 bytes.
	kids  unsafe.Pointer
	more  *nodeMore // nil for a node with no domains, flags or long form
	nkids int32
	// size is the length of the node's card JSON, counted when the
	// render built it (0 for a node built otherwise), so the card JSON
	// is written once into room of its size.
	size int32
	// tag holds the node's kind (the low byte) and its memo number (the
	// rest): a string node the render shared with other nodes of the
	// same string has a memo number, 0 for none; the card JSON of its
	// copies is the same, and is written once and copied.
	tag uint32
}

// maxMemo is the highest memo number a node holds.
const maxMemo = 1<<24 - 1

// kind returns the node's JSON type.
func (n *node) kind() kind { return kind(n.tag) }

// setKind sets the node's JSON type.
func (n *node) setKind(k kind) { n.tag = n.tag&^0xff | uint32(k) }

// memo returns the node's memo number, 0 for none.
func (n *node) memo() int32 { return int32(n.tag >> 8) }

// setMemo sets the node's memo number, at most maxMemo.
func (n *node) setMemo(m int32) { n.tag = n.tag&0xff | uint32(m)<<8 }

// items returns an array's items.
func (n *node) items() []node {
	if n.kind() != kindArray || n.kids == nil {
		return nil
	}
	return unsafe.Slice((*node)(n.kids), n.nkids)
}

// members returns an object's members.
func (n *node) members() []member {
	if n.kind() != kindObject || n.kids == nil {
		return nil
	}
	return unsafe.Slice((*member)(n.kids), n.nkids)
}

// setItems makes n an array of items.
func (n *node) setItems(items []node) {
	n.setKind(kindArray)
	n.kids, n.nkids = unsafe.Pointer(unsafe.SliceData(items)), int32(len(items))
}

// setMembers makes n an object of members.
func (n *node) setMembers(members []member) {
	n.setKind(kindObject)
	n.kids, n.nkids = unsafe.Pointer(unsafe.SliceData(members)), int32(len(members))
}

// stringNode returns the node of a string shown as sh, with no hosts.
func stringNode(sh escape.Shown) node {
	n := node{Text: sh.Text}
	n.setKind(kindString)
	if len(sh.Flags) > 0 {
		n.more = &nodeMore{Flags: sh.Flags}
	}
	return n
}

// nodeMore is what a string node has besides its text.
type nodeMore struct {
	Domains []host.Domain `json:"domains,omitempty"`
	Flags   []string      `json:"flags,omitempty"`
	Long    *longPart     `json:"long,omitempty"`
}

// domains returns the hosts a string node names, analysed.
func (n *node) domains() []host.Domain {
	if n.more == nil {
		return nil
	}
	return n.more.Domains
}

// flags returns a string node's flags.
func (n *node) flags() []string {
	if n.more == nil {
		return nil
	}
	return n.more.Flags
}

// long returns how a string node was shortened, or nil.
func (n *node) long() *longPart {
	if n.more == nil {
		return nil
	}
	return n.more.Long
}

// moreOf returns n's nodeMore, made when it has none.
func (n *node) moreOf() *nodeMore {
	if n.more == nil {
		n.more = &nodeMore{}
	}
	return n.more
}

// longPart describes a string shown shortened: Text holds the start, Full
// all of it (escaped), Bytes and SHA256 the original value's size and hash.
type longPart struct {
	Bytes  int    `json:"bytes"`
	Full   string `json:"full"`
	SHA256 string `json:"sha256"`
}

// member is one member of an object: in the card JSON {"key",
// "key_domains", "value"}, the key as shown ({"flags", "text"}).
type member struct {
	Key   string   `json:"key"` // the key's shown text
	more  *keyMore // the key's flags and hosts; nil when it has none
	Value node     `json:"value"`
}

// keyMore is what a key has besides its shown text.
type keyMore struct {
	flags []string
	doms  []host.Domain // hosts the key holds, analysed like a value's
}

// key returns the member's key as shown.
func (m *member) key() escape.Shown {
	if m.more == nil {
		return escape.Shown{Text: m.Key}
	}
	return escape.Shown{Text: m.Key, Flags: m.more.flags}
}

// keyDoms returns the hosts the member's key holds.
func (m *member) keyDoms() []host.Domain {
	if m.more == nil {
		return nil
	}
	return m.more.doms
}

type refPart struct {
	Index int          `json:"index"` // position in the effect's refs, which the digest covers
	Kind  escape.Shown `json:"kind"`
	Name  escape.Shown `json:"name"`
	// NameDoms are the hosts the name holds, analysed as an argument's
	// are: a reference named by a URL says where it points.
	NameDoms []host.Domain `json:"name_domains,omitempty"`
	Reason   *escape.Shown `json:"reason,omitempty"` // why an unbound reference is not covered
	SHA256   string        `json:"sha256,omitempty"`
	Size     int64         `json:"size"`
	// Target is the object the name resolves to, for the tool that runs
	// the call, when it differs from the name (canon.Ref.Target).
	Target *escape.Shown `json:"target,omitempty"`
}

type contextPart struct {
	Agent         escape.Shown   `json:"agent"`
	Approvers     []escape.Shown `json:"approvers"`
	Audience      escape.Shown   `json:"audience"`
	Delegations   []escape.Shown `json:"delegations"`
	PolicyVersion escape.Shown   `json:"policy_version"`
	Provenance    []escape.Shown `json:"provenance"`
	Reasons       []escape.Shown `json:"reasons"`
	Step          *escape.Shown  `json:"step,omitempty"` // absent when the effect has no step
	Task          escape.Shown   `json:"task"`
	User          escape.Shown   `json:"user"`
}

// untrustedPart holds agent-written text; views show it only inside the
// region labelled as written by the agent.
type untrustedPart struct {
	Rationale       block `json:"rationale"`
	ToolDescription block `json:"tool_description"`
}

// block is multi-line text, escaped except for its line breaks.
type block struct {
	Flags []string  `json:"flags,omitempty"`
	Long  *longPart `json:"long,omitempty"`
	Text  string    `json:"text"`
}

// fingerprint is the short form of the digest people compare by eye: the
// same 12 hex characters as canon.Digest.Short.
func (m *model) fingerprint() string {
	if len(m.Digest) < 12 {
		return "(none)"
	}
	return m.Digest[:12]
}

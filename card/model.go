package card

import (
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

	memos int32 // the highest node.memo
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

// Kinds of node, the JSON types.
const (
	kindString = "string"
	kindNumber = "number"
	kindBool   = "bool"
	kindNull   = "null"
	kindObject = "object"
	kindArray  = "array"
)

// node is one JSON value of the arguments. Scalars carry Text: a string's
// escaped characters (without quotes), a number's canonical text, "true",
// "false" or "null". Objects carry Members in canonical order, arrays Items.
type node struct {
	Domains []host.Domain `json:"domains,omitempty"`
	Flags   []string      `json:"flags,omitempty"`
	Items   []node        `json:"items,omitempty"`
	Kind    string        `json:"kind"`
	Long    *longPart     `json:"long,omitempty"`
	Members []member      `json:"members,omitempty"`
	Text    string        `json:"text"`

	// memo numbers a string node the render shared with other nodes of
	// the same string (0 for none): the card JSON of its copies is the
	// same, and is written once and copied.
	memo int32
}

// longPart describes a string shown shortened: Text holds the start, Full
// all of it (escaped), Bytes and SHA256 the original value's size and hash.
type longPart struct {
	Bytes  int    `json:"bytes"`
	Full   string `json:"full"`
	SHA256 string `json:"sha256"`
}

type member struct {
	Key     escape.Shown  `json:"key"`
	KeyDoms []host.Domain `json:"key_domains,omitempty"` // hosts the key holds, analysed like a value's
	Value   node          `json:"value"`
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

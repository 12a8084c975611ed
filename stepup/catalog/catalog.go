package catalog

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// MaxBytes bounds a catalog file.
const MaxBytes = 4 << 20

// Schema is the JSON Schema (draft 2020-12) every catalog file is
// validated with before it is read.
//
//go:embed catalog.schema.json
var Schema []byte

var catalogSchema = sync.OnceValue(func() *jsonschema.Schema {
	return compileSchema("asu:catalog/catalog.schema.json", Schema)
})

// Reference kinds every catalog may bind arguments to; see canon.
var builtinRefKinds = []string{"file", "url"}

// Catalog is a parsed, checked catalog file: what it says, the policy
// version it decides under, and the policy built from it.
type Catalog struct {
	// Version is the file's own version, or "sha256:" and the first 16
	// hex digits of the SHA-256 of its canonical JSON (RFC 8785) when it
	// has none: any change of substance changes it, reformatting does not.
	Version string
	// Declared reports whether Version is the file's own.
	Declared bool
	// File is the name errors and reports give the file.
	File   string
	Tools  []Tool
	Groups []Group

	src    source
	policy *policy.Catalog
}

// Tool is one tool entry of a catalog file. A tool not in the catalog is
// denied. See the package documentation for each field.
type Tool struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Class is the effect class: read, reversible, external or
	// irreversible.
	Class string `json:"class"`
	// Schema is the JSON Schema the arguments must satisfy.
	Schema json.RawMessage `json:"schema,omitempty"`
	// MaxArgsBytes bounds the canonical arguments' size.
	MaxArgsBytes int `json:"max_args_bytes,omitempty"`
	// MaxLength bounds string arguments by name, in bytes.
	MaxLength map[string]int `json:"max_length,omitempty"`
	// MaxAmount bounds numeric arguments by name (policy.MaxAmount).
	MaxAmount map[string]json.Number `json:"max_amount,omitempty"`
	// AllowDomains keeps address arguments, by name, to the given domains
	// (policy.AllowDomains).
	AllowDomains map[string][]string `json:"allow_domains,omitempty"`
	// Refs binds arguments, by name, to the content they name ("file",
	// "url", or a kind the program adds, see [Options.RefKinds]).
	Refs map[string]string `json:"refs,omitempty"`
	// Unattended lets an external or irreversible call run without
	// approval while the session is untainted.
	Unattended bool `json:"unattended,omitempty"`
	// Approvers names the approver group; empty means the user the call
	// runs for.
	Approvers string `json:"approvers,omitempty"`
	// Quorum is how many distinct members of Approvers must approve.
	Quorum   int      `json:"quorum,omitempty"`
	Audience string   `json:"audience,omitempty"`
	Trusted  []string `json:"trusted,omitempty"`
	Timeout  *Timeout `json:"timeout,omitempty"`
	Card     *Card    `json:"card,omitempty"`
	// Executor says where the service runs the tool; nil leaves it to the
	// program.
	Executor *Executor `json:"executor,omitempty"`
}

// Card is card.Hints as a catalog file spells it.
type Card struct {
	Labels        map[string]string `json:"labels,omitempty"`
	Order         []string          `json:"order,omitempty"`
	Amount        string            `json:"amount,omitempty"`
	Currency      string            `json:"currency,omitempty"`
	FixedCurrency string            `json:"fixed_currency,omitempty"`
	Recipient     string            `json:"recipient,omitempty"`
	Units         map[string]string `json:"units,omitempty"`
	Domains       []string          `json:"domains,omitempty"`
}

// Timeout is how long approvers have and what happens after: "cancel"
// (the default), "escalate" to the group EscalateTo, or "alternative",
// proposing the read or reversible tool Alternative instead.
type Timeout struct {
	After       string `json:"after,omitempty"` // a Go duration, e.g. "15m"
	Outcome     string `json:"outcome,omitempty"`
	EscalateTo  string `json:"escalate_to,omitempty"`
	Alternative string `json:"alternative,omitempty"`
}

// Group is an approver group: its name, as tools' approvers and
// escalate_to name it, and its members, people's principal ids
// ("user:ann").
type Group struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

// Executor is where the service runs a tool: it POSTs the stored effect
// to URL, waits at most Timeout per attempt and tries again up to Retries
// times with the same idempotency key.
//
//	"executor": {"url": "https://tools.internal/refund", "timeout": "10s", "retries": 2}
type Executor struct {
	URL     string
	Timeout time.Duration
	Retries int
}

// Executor limits.
const (
	DefaultExecutorTimeout = 10 * time.Second
	MinExecutorTimeout     = time.Millisecond
	MaxExecutorTimeout     = 10 * time.Minute
	MaxExecutorRetries     = 10
)

type executorJSON struct {
	URL     string `json:"url"`
	Timeout string `json:"timeout,omitempty"`
	Retries int    `json:"retries,omitempty"`
}

// MarshalJSON writes e as a catalog file spells it.
func (e Executor) MarshalJSON() ([]byte, error) {
	j := executorJSON{URL: e.URL, Retries: e.Retries}
	if e.Timeout != 0 {
		j.Timeout = e.Timeout.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads e as a catalog file spells it; Parse checks the
// values.
func (e *Executor) UnmarshalJSON(b []byte) error {
	var j executorJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	e.URL, e.Retries, e.Timeout = j.URL, j.Retries, 0
	if j.Timeout != "" {
		d, err := time.ParseDuration(j.Timeout)
		if err != nil {
			d = -1 // Parse refuses it, on its line
		}
		e.Timeout = d
	}
	return nil
}

// Options adapt the format to a program. Nil means the service's
// defaults.
type Options struct {
	// File names the file in errors (Parse; ParseFile sets it).
	File string
	// RefKinds are reference kinds beyond "file" and "url" that the
	// program's resolver knows, e.g. the MCP gateway's "path".
	RefKinds []string
	// ProgramGroups lets tools name approver groups the file does not
	// define: the program defines them (gate.WithApproverGroup). Without
	// it a tool naming an undefined group is refused.
	ProgramGroups bool
	// NoExecutors refuses executor blocks: the program runs every tool
	// itself (the MCP gateway calls its upstream server).
	NoExecutors bool
}

type fileJSON struct {
	Schema  string  `json:"$schema,omitempty"`
	Version string  `json:"version,omitempty"`
	Tools   []Tool  `json:"tools"`
	Groups  []Group `json:"groups,omitempty"`
}

// ParseFile reads and parses the catalog file at path; errors name it.
func ParseFile(path string, opts *Options) (*Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Problem: "cannot open: " + openProblem(err)}
	}
	defer f.Close()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.File = path
	return Parse(f, &o)
}

// Parse reads a catalog file (JSON), validates it with [Schema], checks
// what a schema cannot say (duplicate keys, tools and groups; groups a
// tool names; quorums against their groups; durations, URLs, principal
// ids; argument schemas that do not compile) and builds its policy.
// Every refusal is an [*Error] naming the file, line, column and field.
func Parse(r io.Reader, opts *Options) (*Catalog, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	data, err := readLimited(o.File, r, MaxBytes)
	if err != nil {
		return nil, err
	}
	src := source{name: o.File, data: data}
	if e := src.validate(catalogSchema()); e != nil {
		return nil, e
	}
	var f fileJSON
	if e := src.decodeStrict(&f); e != nil {
		return nil, e
	}
	c := &Catalog{Version: f.Version, Declared: f.Version != "", File: o.File, Tools: f.Tools, Groups: f.Groups, src: src}
	if c.Tools == nil {
		c.Tools = []Tool{}
	}
	if e := c.check(o); e != nil {
		return nil, e
	}
	if !c.Declared {
		v, e := src.contentVersion()
		if e != nil {
			return nil, e
		}
		c.Version = v
	}
	pol, err := c.Build(nil)
	if err != nil {
		return nil, err
	}
	c.policy = pol
	return c, nil
}

// contentVersion is "sha256:" and 16 hex digits of the file's canonical
// JSON.
func (s source) contentVersion() (string, *Error) {
	canonical, err := canon.Limits{MaxBytes: MaxBytes, MaxDepth: maxDepth + 1}.Canonicalize(s.data)
	if err != nil {
		var ce *canon.Error
		off := int64(0)
		if errors.As(err, &ce) {
			off = int64(ce.Offset)
		}
		return "", s.atOffset(off, s.pointerAt(off), "cannot be hashed for a policy version (give \"version\"): "+canonProblem(err))
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:8]), nil
}

func canonProblem(err error) string {
	for _, s := range []error{canon.ErrNumber, canon.ErrDuplicateKey, canon.ErrTooDeep, canon.ErrLoneSurrogate} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "not canonical JSON"
}

// Policy returns the policy the catalog decides with: deny by default,
// each tool's schema and limits, its class, approvers, quorum and
// timeout. Pass it to gate.New with one gate.WithApproverGroup for each
// of [Catalog.ApproverGroups].
func (c *Catalog) Policy() *policy.Catalog { return c.policy }

// ApproverGroups returns the groups the file defines, by name, with their
// members; the map and its slices are the caller's.
func (c *Catalog) ApproverGroups() map[string][]string {
	out := make(map[string][]string, len(c.Groups))
	for _, g := range c.Groups {
		out[g.Name] = slices.Clone(g.Members)
	}
	return out
}

// Executors returns the executor block of every tool that has one, by
// tool name.
func (c *Catalog) Executors() map[string]Executor {
	out := map[string]Executor{}
	for _, t := range c.Tools {
		if t.Executor != nil {
			out[t.Name] = *t.Executor
		}
	}
	return out
}

// Tool returns the entry of the tool called name.
func (c *Catalog) Tool(name string) (Tool, bool) {
	for _, t := range c.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Build builds the policy of the catalog, letting adjust change each
// tool's policy entry first (a program adds what only it knows, such as
// an upstream server's description); nil adjusts nothing. [Parse]
// already built it once without adjust, so a refusal here comes from
// adjust's changes; it is placed on the tool it names.
func (c *Catalog) Build(adjust func(t Tool, pt *policy.Tool) error) (*policy.Catalog, error) {
	tools := make([]policy.Tool, 0, len(c.Tools))
	for _, t := range c.Tools {
		pt := t.PolicyTool()
		if adjust != nil {
			if err := adjust(t, &pt); err != nil {
				return nil, err
			}
		}
		tools = append(tools, pt)
	}
	pol, err := policy.NewCatalog(c.Version, tools...)
	if err != nil {
		return nil, c.placePolicyError(err)
	}
	return pol, nil
}

// placePolicyError puts what policy.NewCatalog refused (a schema that
// does not compile, card hints it cannot render) on the tool it names.
// Parse checked the rest of what NewCatalog checks, on its field.
func (c *Catalog) placePolicyError(err error) *Error {
	p := configProblem(err)
	for i, t := range c.Tools {
		if !strings.Contains(p, strconv.Quote(t.Name)) {
			continue
		}
		ptr := "/tools/" + strconv.Itoa(i)
		switch {
		case strings.Contains(p, "schema of"):
			ptr += "/schema"
		case t.Card != nil:
			ptr += "/card"
		}
		return c.src.at(ptr, p)
	}
	return &Error{File: c.File, Problem: p}
}

// configProblem is a policy error's text without its sentinel's prefix.
func configProblem(err error) string {
	s := strings.TrimPrefix(err.Error(), stepup.ErrConfig.Error()+": ")
	// A schema compiler's report runs over lines, the most precise last.
	if lines := strings.Split(strings.TrimSpace(s), "\n"); len(lines) > 1 {
		first, _, _ := strings.Cut(lines[0], ": ")
		s = first + ": " + strings.TrimLeft(lines[len(lines)-1], " -")
	}
	return s
}

// PolicyTool is the tool's entry as the default policy reads it.
func (t Tool) PolicyTool() policy.Tool {
	pt := policy.Tool{Name: t.Name, Title: t.Title, Class: t.Class, Schema: bytes.Clone(t.Schema),
		Unattended: t.Unattended, Approvers: t.Approvers, Quorum: t.Quorum, Audience: t.Audience,
		Trusted: slices.Clone(t.Trusted), Refs: maps.Clone(t.Refs)}
	if pt.Title == "" {
		pt.Title = t.Name
	}
	if t.MaxArgsBytes > 0 {
		pt.Limits = append(pt.Limits, maxArgsBytes(t.MaxArgsBytes))
	}
	for _, arg := range sortedKeys(t.MaxLength) {
		pt.Limits = append(pt.Limits, maxLength(arg, t.MaxLength[arg]))
	}
	for _, arg := range sortedKeys(t.MaxAmount) {
		pt.Limits = append(pt.Limits, policy.MaxAmount(arg, string(t.MaxAmount[arg])))
	}
	for _, arg := range sortedKeys(t.AllowDomains) {
		pt.Limits = append(pt.Limits, policy.AllowDomains(arg, t.AllowDomains[arg]...))
	}
	if c := t.Card; c != nil {
		pt.Hints.Labels, pt.Hints.Order, pt.Hints.Units, pt.Hints.Domains =
			maps.Clone(c.Labels), slices.Clone(c.Order), maps.Clone(c.Units), slices.Clone(c.Domains)
		pt.Hints.Amount, pt.Hints.Currency, pt.Hints.FixedCurrency, pt.Hints.Recipient =
			c.Amount, c.Currency, c.FixedCurrency, c.Recipient
	}
	if to := t.Timeout; to != nil {
		pt.Timeout.Outcome = plug.Outcome(to.Outcome)
		pt.Timeout.EscalateTo, pt.Timeout.Alternative = to.EscalateTo, to.Alternative
		if to.After != "" {
			pt.Timeout.After, _ = time.ParseDuration(to.After) // checked by Parse
		}
	}
	return pt
}

// NamedArgs lists the argument names the entry gives a meaning: its
// limits, references and card hints.
func (t Tool) NamedArgs() []string {
	named := slices.Concat(sortedKeys(t.MaxLength), sortedKeys(t.MaxAmount), sortedKeys(t.AllowDomains), sortedKeys(t.Refs))
	if c := t.Card; c != nil {
		named = append(named, sortedKeys(c.Labels)...)
		named = append(named, sortedKeys(c.Units)...)
		named = append(named, c.Order...)
		for _, n := range []string{c.Amount, c.Currency, c.Recipient} {
			if n != "" {
				named = append(named, n)
			}
		}
	}
	return named
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Marshal writes a catalog file of version (empty: none, the content hash
// stands) with tools and groups, indented, that Parse reads back.
func Marshal(version string, tools []Tool, groups []Group) ([]byte, error) {
	f := fileJSON{Version: version, Tools: tools, Groups: groups}
	if f.Tools == nil {
		f.Tools = []Tool{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	return b.Bytes(), nil
}

// DefaultTests is where a catalog's test file lies by default: beside it,
// "catalog.json" → "catalog.test.json".
func DefaultTests(catalogPath string) string {
	ext := filepath.Ext(catalogPath)
	return strings.TrimSuffix(catalogPath, ext) + ".test" + ext
}

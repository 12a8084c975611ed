package mcpgate

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// MaxCatalogBytes bounds a catalog file.
const MaxCatalogBytes = 4 << 20

// CatalogSchema is the JSON Schema every catalog file is validated with
// before it is read.
//
//go:embed catalog.schema.json
var CatalogSchema []byte

// ErrCatalog is wrapped by every refusal of a catalog file; the
// [*CatalogError] it comes in says where.
var ErrCatalog = errors.New("mcpgate: invalid catalog")

// CatalogError is one problem in a catalog file, with its line (from 1;
// 0 when the file as a whole is at fault) and the JSON pointer of the
// value at fault.
type CatalogError struct {
	Line    int
	Pointer string
	Problem string
}

// Error implements error.
func (e *CatalogError) Error() string {
	where := "catalog"
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Pointer != "" {
		where += " (" + e.Pointer + ")"
	}
	return where + ": " + e.Problem
}

// Unwrap returns [ErrCatalog].
func (e *CatalogError) Unwrap() error { return ErrCatalog }

// Catalog is a parsed catalog file: the policy version and, for each
// upstream tool the integrator admits, its entry. A tool not in it is
// denied, whatever its server says about it.
type Catalog struct {
	Version string
	Tools   []CatalogTool
}

// CatalogTool is one admitted upstream tool.
type CatalogTool struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Class is the effect class the integrator declares: read, reversible,
	// external or irreversible. The upstream annotations never change it.
	Class string `json:"class"`
	// Schema, when set, replaces the upstream input schema for the gate's
	// check; the upstream schema is what the host is shown either way.
	Schema json.RawMessage `json:"schema,omitempty"`
	// MaxArgsBytes bounds the canonical arguments' size.
	MaxArgsBytes int `json:"max_args_bytes,omitempty"`
	// MaxLength bounds string arguments by name, in bytes.
	MaxLength map[string]int `json:"max_length,omitempty"`
	// MaxAmount bounds numeric arguments by name, compared exactly as
	// decimals.
	MaxAmount map[string]json.Number `json:"max_amount,omitempty"`
	// AllowDomains keeps address arguments, by name, to the given domains.
	AllowDomains map[string][]string `json:"allow_domains,omitempty"`
	// Refs binds arguments, by name, to the content they name: "path" for
	// a file path of the upstream server, resolved to a content hash
	// under the gateway's root (see [PathResolver]); "file" and "url" as
	// canon defines them.
	Refs       map[string]string `json:"refs,omitempty"`
	Unattended bool              `json:"unattended,omitempty"`
	Approvers  string            `json:"approvers,omitempty"`
	// Trusted lists domains whose look-alikes the card flags.
	Trusted []string        `json:"trusted,omitempty"`
	Timeout *CatalogTimeout `json:"timeout,omitempty"`
	// Card lays out the approval card (see card.Hints).
	Card *CatalogCard `json:"card,omitempty"`
}

// CatalogCard is card.Hints as the catalog file spells it.
type CatalogCard struct {
	Labels        map[string]string `json:"labels,omitempty"`
	Order         []string          `json:"order,omitempty"`
	Amount        string            `json:"amount,omitempty"`
	Currency      string            `json:"currency,omitempty"`
	FixedCurrency string            `json:"fixed_currency,omitempty"`
	Recipient     string            `json:"recipient,omitempty"`
	Units         map[string]string `json:"units,omitempty"`
	Domains       []string          `json:"domains,omitempty"`
}

// CatalogTimeout is how long approvers have and what happens after.
type CatalogTimeout struct {
	After       string `json:"after,omitempty"` // e.g. "10m"
	Outcome     string `json:"outcome,omitempty"`
	EscalateTo  string `json:"escalate_to,omitempty"`
	Alternative string `json:"alternative,omitempty"`
}

type catalogFile struct {
	Version string        `json:"version"`
	Tools   []CatalogTool `json:"tools"`
}

// ParseCatalog reads a catalog file (JSON), validates it with
// [CatalogSchema] and checks what a schema cannot say (duplicate names,
// durations). Every problem is a [*CatalogError] with its line.
func ParseCatalog(r io.Reader) (*Catalog, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxCatalogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	if len(data) > MaxCatalogBytes {
		return nil, &CatalogError{Problem: fmt.Sprintf("larger than %d bytes", MaxCatalogBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &CatalogError{Problem: "not UTF-8"}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, syntaxError(data, err)
	}
	if err := catalogSchema().Validate(inst); err != nil {
		return nil, schemaError(data, err)
	}
	var f catalogFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, syntaxError(data, err)
	}
	seen := map[string]int{}
	for i, t := range f.Tools {
		ptr := "/tools/" + strconv.Itoa(i)
		if j, dup := seen[t.Name]; dup {
			return nil, at(data, ptr+"/name", fmt.Sprintf("tool %q is given twice (first at /tools/%d)", t.Name, j))
		}
		seen[t.Name] = i
		if t.Timeout != nil && t.Timeout.After != "" {
			if d, err := time.ParseDuration(t.Timeout.After); err != nil || d <= 0 {
				return nil, at(data, ptr+"/timeout/after", "not a positive duration")
			}
		}
	}
	return &Catalog{Version: f.Version, Tools: f.Tools}, nil
}

// Class returns the class of tool name, or "" when it is not admitted.
func (c *Catalog) Class(name string) string {
	for _, t := range c.Tools {
		if t.Name == name {
			return t.Class
		}
	}
	return ""
}

// Policy returns the gate's catalog policy for these entries. Each entry
// takes its Description from the upstream tool of the same name, and the
// card shows it only in the region written by others; its schema, unless
// the entry sets one, is the upstream input schema. An admitted tool the
// upstream does not list is kept: calls of it are decided like any other
// and fail at the upstream.
func (c *Catalog) Policy(upstream []*mcp.Tool) (*policy.Catalog, error) {
	byName := make(map[string]*mcp.Tool, len(upstream))
	for _, u := range upstream {
		byName[u.Name] = u
	}
	tools := make([]policy.Tool, 0, len(c.Tools))
	for _, t := range c.Tools {
		pt, err := t.policyTool(byName[t.Name])
		if err != nil {
			return nil, err
		}
		tools = append(tools, pt)
	}
	return policy.NewCatalog(c.Version, tools...)
}

func (t CatalogTool) policyTool(u *mcp.Tool) (policy.Tool, error) {
	pt := policy.Tool{Name: t.Name, Title: t.Title, Class: t.Class, Schema: t.Schema,
		Unattended: t.Unattended, Approvers: t.Approvers, Trusted: slices.Clone(t.Trusted)}
	if pt.Title == "" {
		pt.Title = t.Name
	}
	if u != nil {
		pt.Description = u.Description
		if pt.Schema == nil && u.InputSchema != nil {
			raw, err := json.Marshal(u.InputSchema)
			if err != nil {
				return policy.Tool{}, fmt.Errorf("%w: input schema of %q: %v", ErrCatalog, t.Name, err)
			}
			pt.Schema = raw
		}
	}
	if len(t.Refs) > 0 {
		pt.Refs = map[string]string{}
		for arg, kind := range t.Refs {
			pt.Refs[arg] = kind
		}
	}
	pt.Limits = append(pt.Limits, keyLimit(t.namedArgs()))
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
		pt.Hints = card.Hints{Labels: c.Labels, Order: c.Order, Amount: c.Amount, Currency: c.Currency,
			FixedCurrency: c.FixedCurrency, Recipient: c.Recipient, Units: c.Units, Domains: c.Domains}
	}
	if to := t.Timeout; to != nil {
		pt.Timeout = plug.Timeout{Outcome: plug.Outcome(to.Outcome), EscalateTo: to.EscalateTo, Alternative: to.Alternative}
		if to.After != "" {
			pt.Timeout.After, _ = time.ParseDuration(to.After) // checked by ParseCatalog
		}
	}
	return pt, nil
}

// namedArgs lists the argument names the entry gives a meaning: its
// limits, references and card hints.
func (t CatalogTool) namedArgs() []string {
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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxArgsBytes denies calls whose arguments, as JSON, exceed n bytes.
func maxArgsBytes(n int) policy.Limit {
	return func(args canon.Value) string {
		if len(args.Canonical()) > n {
			return "arguments larger than the catalog allows"
		}
		return ""
	}
}

// maxLength denies calls whose string argument arg exceeds n bytes.
func maxLength(arg string, n int) policy.Limit {
	return func(args canon.Value) string {
		v, ok := args.Get(arg)
		if !ok {
			return ""
		}
		if v.Kind() != canon.KindString {
			return "argument " + arg + " is not a string"
		}
		if len(v.String()) > n {
			return "argument " + arg + " longer than the catalog allows"
		}
		return ""
	}
}

// StarterCatalog returns a catalog file admitting every tool of an
// upstream listing, for the integrator to edit. Every tool is
// irreversible, the worst case, unless trustHints is set: then each gets
// [SuggestClass] of its annotations, which is still the worst reading of
// them. Review it before use: it admits everything the server offers.
func StarterCatalog(version string, upstream []*mcp.Tool, trustHints bool) ([]byte, error) {
	f := catalogFile{Version: version, Tools: []CatalogTool{}}
	for _, u := range upstream {
		class := card.ClassIrreversible
		if trustHints {
			class = SuggestClass(u.Annotations)
		}
		title := u.Title
		if title == "" && u.Annotations != nil {
			title = u.Annotations.Title
		}
		f.Tools = append(f.Tools, CatalogTool{Name: u.Name, Title: title, Class: class})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if _, err := ParseCatalog(bytes.NewReader(b.Bytes())); err != nil {
		return nil, fmt.Errorf("starter catalog: %w", err) // an upstream name the schema refuses
	}
	return b.Bytes(), nil
}

// catalogSchema is [CatalogSchema] compiled once; nothing changes it.
var catalogSchema = sync.OnceValue(compileCatalogSchema)

// compileCatalogSchema compiles [CatalogSchema]. It is embedded and
// tested, so a failure is a bug in this package.
func compileCatalogSchema() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(CatalogSchema))
	if err != nil {
		panic("mcpgate: catalog schema: " + err.Error())
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("asu:mcpgate/catalog.json", doc); err != nil {
		panic("mcpgate: catalog schema: " + err.Error())
	}
	s, err := comp.Compile("asu:mcpgate/catalog.json")
	if err != nil {
		panic("mcpgate: catalog schema: " + err.Error())
	}
	return s
}

// syntaxError places a JSON decoding error on its line.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &CatalogError{Line: lineAt(data, se.Offset), Problem: "not JSON: " + se.Error()}
	case errors.As(err, &te):
		return &CatalogError{Line: lineAt(data, te.Offset), Pointer: "/" + strings.ReplaceAll(te.Field, ".", "/"),
			Problem: "wrong type: want " + te.Type.String()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &CatalogError{Line: lineAt(data, int64(len(data))), Problem: "not JSON: unexpected end"}
	}
	return &CatalogError{Problem: "not JSON: " + err.Error()}
}

// schemaError reports the first schema violation, by document order.
func schemaError(data []byte, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &CatalogError{Problem: err.Error()}
	}
	leaves := leafErrors(ve, nil)
	p := message.NewPrinter(language.English)
	// The first problem in document order, preferring a property that
	// should not be there (a misspelling, say) to the one it then lacks.
	var best *CatalogError
	bestMissing := true
	for _, l := range leaves {
		ptr := pointer(l.InstanceLocation)
		_, missing := l.ErrorKind.(*kind.Required)
		if extra, ok := l.ErrorKind.(*kind.AdditionalProperties); ok && len(extra.Properties) > 0 {
			ptr += pointer(extra.Properties[:1])
		}
		ce := at(data, ptr, l.ErrorKind.LocalizedString(p)).(*CatalogError)
		if best == nil || (bestMissing && !missing) || (bestMissing == missing && ce.Line < best.Line) {
			best, bestMissing = ce, missing
		}
	}
	if best == nil {
		return &CatalogError{Problem: ve.ErrorKind.LocalizedString(p)}
	}
	return best
}

func leafErrors(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leafErrors(c, out)
	}
	return out
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// at is a CatalogError for the value at ptr.
func at(data []byte, ptr, problem string) error {
	off, ok := offsetOf(data, ptr)
	line := 0
	if ok {
		line = lineAt(data, off)
	}
	return &CatalogError{Line: line, Pointer: ptr, Problem: problem}
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// offsetOf finds where the value at JSON pointer ptr starts in data.
func offsetOf(data []byte, ptr string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want []string
	if ptr != "" {
		for _, s := range strings.Split(ptr[1:], "/") {
			want = append(want, strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~"))
		}
	}
	return seek(dec, data, want)
}

// seek descends into the next value of dec along path and returns where
// the value the path names starts.
func seek(dec *json.Decoder, data []byte, path []string) (int64, bool) {
	start := skipSpace(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	if len(path) == 0 {
		return start, true
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return 0, false
			}
			if k == path[0] {
				return seek(dec, data, path[1:])
			}
			if !skipValue(dec) {
				return 0, false
			}
		}
	case json.Delim('['):
		n, err := strconv.Atoi(path[0])
		if err != nil {
			return 0, false
		}
		for i := 0; dec.More(); i++ {
			if i == n {
				return seek(dec, data, path[1:])
			}
			if !skipValue(dec) {
				return 0, false
			}
		}
	}
	return 0, false
}

// skipSpace moves off past whitespace and the separators ':' and ','
// that the decoder has not consumed yet.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

func skipValue(dec *json.Decoder) bool {
	var v json.RawMessage
	return dec.Decode(&v) == nil
}

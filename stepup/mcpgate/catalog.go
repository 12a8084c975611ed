package mcpgate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/policy"
)

// MaxCatalogBytes bounds a catalog file.
const MaxCatalogBytes = catalog.MaxBytes

// CatalogSchema is the JSON Schema every catalog file is validated with
// before it is read: the one catalog format of stepup/catalog, which the
// HTTP service reads too.
var CatalogSchema = catalog.Schema

// ErrCatalog is wrapped by every refusal of a catalog file; the
// [*CatalogError] it comes in says where. It is catalog.ErrCatalog.
var ErrCatalog = catalog.ErrCatalog

// CatalogError is one problem in a catalog file, with its line and
// column (from 1; 0 when the file as a whole is at fault) and the JSON
// pointer of the value at fault.
type CatalogError = catalog.Error

// Catalog is a parsed catalog file: the policy version and, for each
// upstream tool the integrator admits, its entry. A tool not in it is
// denied, whatever its server says about it.
type Catalog struct {
	Version string
	Tools   []CatalogTool
	file    *catalog.Catalog
}

// CatalogTool is one admitted upstream tool, as stepup/catalog reads it.
// On the MCP gateway, Schema (when set) replaces the upstream input
// schema for the gate's check, and the host is shown the schema the gate
// enforces ([Options.EnforcedSchema]), also after the upstream's list
// changes; Refs may also be "path", a file path of the upstream
// server resolved under the gateway's root (see [PathResolver]); an
// executor block is refused, since every call goes to the upstream.
type CatalogTool = catalog.Tool

// CatalogCard is card.Hints as the catalog file spells it.
type CatalogCard = catalog.Card

// CatalogTimeout is how long approvers have and what happens after.
type CatalogTimeout = catalog.Timeout

// catalogOptions are the MCP gateway's extension of the format: path
// references, approver groups the program may define in Go, and no
// executor blocks.
func catalogOptions(name string) *catalog.Options {
	return &catalog.Options{File: name, RefKinds: []string{"path"}, ProgramGroups: true, NoExecutors: true}
}

// ParseCatalog reads a catalog file (JSON) as stepup/catalog.Parse does,
// with the MCP gateway's extension: "path" references, groups a program
// may add with gate.WithApproverGroup, no executor blocks. Every problem
// is a [*CatalogError] with its line.
func ParseCatalog(r io.Reader) (*Catalog, error) {
	c, err := catalog.Parse(r, catalogOptions(""))
	if err != nil {
		return nil, err
	}
	return &Catalog{Version: c.Version, Tools: c.Tools, file: c}, nil
}

// ParseCatalogFile reads the catalog file at path as [ParseCatalog]
// does; its errors name the file.
func ParseCatalogFile(path string) (*Catalog, error) {
	c, err := catalog.ParseFile(path, catalogOptions(path))
	if err != nil {
		return nil, err
	}
	return &Catalog{Version: c.Version, Tools: c.Tools, file: c}, nil
}

// ApproverGroups returns the approver groups the file defines, by name,
// for gate.WithApproverGroup.
func (c *Catalog) ApproverGroups() map[string][]string { return c.file.ApproverGroups() }

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
	var listed []string // the tools whose schema is the upstream's
	pol, err := c.file.Build(func(t catalog.Tool, pt *policy.Tool) error {
		if u := byName[t.Name]; u != nil {
			pt.Description = u.Description
			if pt.Schema == nil && u.InputSchema != nil {
				raw, err := json.Marshal(u.InputSchema)
				if err != nil {
					return fmt.Errorf("%w: input schema of %q: %v", ErrCatalog, t.Name, err)
				}
				pt.Schema = raw
				listed = append(listed, t.Name)
			}
		}
		// Keys the upstream may fold onto a named argument are refused
		// before any limit reads the name.
		pt.Limits = append([]policy.Limit{keyLimit(t.NamedArgs())}, pt.Limits...)
		return nil
	})
	if err != nil {
		// Every refusal of a schema names it "schema of TOOL"; one the
		// upstream listed is fixed in the catalog, not at the upstream.
		for _, name := range listed {
			if strings.Contains(err.Error(), fmt.Sprintf("schema of %q", name)) {
				return nil, fmt.Errorf("%w (that schema is the one the upstream lists for %q: give the tool a \"schema\" of its own in the catalog, which is used instead)", err, name)
			}
		}
	}
	return pol, err
}

// StarterCatalog returns a catalog file admitting every tool of an
// upstream listing, for the integrator to edit. Every tool is
// irreversible, the worst case, unless trustHints is set: then each gets
// [SuggestClass] of its annotations, which is still the worst reading of
// them. No tool gets a title: a title is shown on the card as the
// operator's own words, so the upstream's (which the server, not the
// operator, wrote) is never copied; write each yourself. Review it before
// use: it admits everything the server offers.
func StarterCatalog(version string, upstream []*mcp.Tool, trustHints bool) ([]byte, error) {
	tools := []CatalogTool{}
	for _, u := range upstream {
		class := card.ClassIrreversible
		if trustHints {
			class = SuggestClass(u.Annotations)
		}
		// No title: a title is trusted text on the card, and the
		// upstream's is the server's words, not the operator's. The card
		// names the tool until the operator writes one.
		tools = append(tools, CatalogTool{Name: u.Name, Class: class})
	}
	raw, err := catalog.Marshal(version, tools, nil)
	if err != nil {
		return nil, err
	}
	if _, err := ParseCatalog(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("starter catalog: %w", err) // an upstream name the schema refuses
	}
	return raw, nil
}

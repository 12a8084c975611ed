package policy

import (
	"bytes"
	"encoding/json"
)

// Schema returns the JSON Schema the catalog checks the arguments of tool
// against (a copy; nil when the tool is admitted without one), and whether
// the catalog admits tool at all. A front end that shows tools to a model
// shows this schema, so the model is never offered calls the catalog
// refuses, nor held to a schema the catalog does not check.
func (c *Catalog) Schema(tool string) (json.RawMessage, bool) {
	t, ok := c.tools[tool]
	if !ok {
		return nil, false
	}
	return bytes.Clone(t.Schema), true
}

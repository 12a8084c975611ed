package gateway

import (
	"bytes"
	_ "embed"
	"net/http"
)

// OpenAPIPath is where the agent API serves its OpenAPI document, without
// a token: it says how to call the API, and nothing about any ticket.
const OpenAPIPath = "/openapi.json"

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of the agent API ([AgentAPI]):
// its routes, bodies, answers and error codes, for runtimes in any
// language. The package's tests validate real requests and answers of the
// handler against it.
func OpenAPI() []byte { return bytes.Clone(openAPI) }

// serveOpenAPI answers GET /openapi.json.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPI)
}

package gateway_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/stepup/gateway"
)

// The agent API's OpenAPI document, which the service also serves at
// GET /openapi.json, names its routes.
func ExampleOpenAPI() {
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(gateway.OpenAPI(), &doc); err != nil {
		panic(err)
	}
	fmt.Println(doc.OpenAPI, len(doc.Paths))
	// Output: 3.1.0 5
}

package catalog_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentstepup/asu/stepup/catalog"
)

// BenchmarkParse measures parsing the full example file and a catalog of
// 1000 tools, each with its own argument schema (the format's bound).
func BenchmarkParse(b *testing.B) {
	full, err := os.ReadFile("testdata/full.json")
	if err != nil {
		b.Fatal(err)
	}
	var big strings.Builder
	big.WriteString(`{"version":"v1","tools":[`)
	for i := range 1000 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"name":"tool_%d","class":"irreversible","max_amount":{"amount":500},`+
			`"schema":{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"}}}}`, i)
	}
	big.WriteString(`]}`)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"full", full}, {"1000-tools", []byte(big.String())}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if _, err := catalog.Parse(bytes.NewReader(tc.data), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

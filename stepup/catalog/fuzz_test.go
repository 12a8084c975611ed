package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/agentstepup/asu/stepup/catalog"
)

// FuzzParse feeds the parser arbitrary files. Nothing panics; a refusal
// is an *Error wrapping ErrCatalog; an accepted catalog has a version and
// a policy, and what Marshal writes of it parses back to the same
// version when the file declared one.
func FuzzParse(f *testing.F) {
	// A small catalog with every field; the long files of testdata are
	// for TestMutations, which walks each of their values.
	f.Add([]byte(`{"version":"v1","groups":[{"name":"g","members":["user:a","user:b"]}],"tools":[` +
		`{"name":"r","class":"read","refs":{"p":"file"}},` +
		`{"name":"m","class":"external","schema":{"type":"object"},"max_args_bytes":99,"max_length":{"s":9},` +
		`"allow_domains":{"to":["example.com"]},"trusted":["example.com"],"card":{"recipient":"to"},` +
		`"timeout":{"after":"1m","outcome":"alternative","alternative":"r"}},` +
		`{"name":"x","class":"irreversible","max_amount":{"n":5},"approvers":"g","quorum":2,"audience":"xs",` +
		`"timeout":{"after":"1h","outcome":"escalate","escalate_to":"g"},` +
		`"executor":{"url":"https://t.test/x","timeout":"5s","retries":1}}]}`))
	for _, s := range []string{``, `{}`, `{"tools":[]}`, `{"tools":[],"tools":[]}`, `{"tools":[{"name":"a","class":"read"}]} x`,
		`{"tools":[{"name":"a","class":"read","max_amount":{"x":1e400}}]}`, "{\"tools\":[{\"name\":\"\\ud800\",\"class\":\"read\"}]}",
		`{"groups":[{"name":"g","members":["user:a"]}],"tools":[{"name":"a","class":"irreversible","approvers":"g","quorum":2}]}`,
		`{"tools":[{"name":"a","class":"read","schema":{"$ref":"#/x"}}]}`,
		`{"tools":[{"name":"a","class":"read","executor":{"url":"http://[::1]:80/x","timeout":"1.5s"}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := catalog.Parse(bytes.NewReader(data), &catalog.Options{File: "f.json"})
		if err != nil {
			var ce *catalog.Error
			if !errors.As(err, &ce) || !errors.Is(err, catalog.ErrCatalog) {
				t.Fatalf("refusal without an *Error: %v", err)
			}
			return
		}
		if c.Version == "" || c.Policy() == nil || c.Policy().Version() != c.Version {
			t.Fatalf("accepted without a version or policy: %q", c.Version)
		}
		if !c.Declared {
			return
		}
		raw, err := catalog.Marshal(c.Version, c.Tools, c.Groups)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := catalog.Parse(bytes.NewReader(raw), nil)
		if err != nil {
			t.Fatalf("a catalog written back is refused: %v\n%s", err, raw)
		}
		if back.Version != c.Version || len(catalog.Compare(c, back).Changes) != 0 {
			t.Fatalf("a catalog written back differs: %v", catalog.Compare(c, back).Changes)
		}
	})
}

// FuzzParseTests feeds the test-file parser arbitrary files and runs what
// it accepts against the example catalog: nothing panics, and a refusal
// is an *Error.
func FuzzParseTests(f *testing.F) {
	raw, err := os.ReadFile("../../examples/service/catalog.test.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"cases":[{"name":"x","tool":"a","args":{"a":9007199254740993},"want":{"decision":"allow"}}]}`))
	f.Add([]byte(`{"cases":[{"name":"x","tool":"a","args":{},"principal":{"user":"agent:x","agent":"user:y"},"want":{"decision":"deny"}}]}`))
	c, err := catalog.ParseFile("../../examples/service/catalog.json", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tests, err := catalog.ParseTests(bytes.NewReader(data), "t.json")
		if err != nil {
			var ce *catalog.Error
			if !errors.As(err, &ce) || !errors.Is(err, catalog.ErrCatalog) {
				t.Fatalf("refusal without an *Error: %v", err)
			}
			return
		}
		rep, err := c.Check(context.Background(), tests)
		if err != nil {
			t.Fatalf("check: %v", err)
		}
		if len(rep.Results) != len(tests.Cases) {
			t.Fatalf("%d results for %d cases", len(rep.Results), len(tests.Cases))
		}
		var b bytes.Buffer
		if err := rep.Write(&b, true); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeJSON: DecodeJSON never panics, and refuses only with an
// *Error wrapping ErrCatalog that is placed in the file.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{``, "\ufeff{}", `{}`, `{"const": "fixed"}`, `{"enum": 3} x`, `{"pattern": "x", "pattern": "y"}`,
		`{"unique": [1, 1]}`, `{"email": "a@b.test"}`, `{"not": 1, "Not": 2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		err := catalog.DecodeJSON("f.json", data, []byte(keywordSchema), &v, nil)
		if err == nil {
			return
		}
		var ce *catalog.Error
		if !errors.As(err, &ce) || !errors.Is(err, catalog.ErrCatalog) || ce.File != "f.json" {
			t.Fatalf("refusal without an *Error: %v", err)
		}
	})
}

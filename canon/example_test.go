package canon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/canon"
)

func ExampleCanonicalize() {
	out, err := canon.Canonicalize([]byte(`{ "to": "finance@example.com", "amount": 1.50, "cc": [] }`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))

	// Numbers that a float64 would change are refused, not rounded.
	_, err = canon.Canonicalize([]byte(`{"amount": 9007199254740993}`))
	fmt.Println(errors.Is(err, canon.ErrNumber), err)

	// So are keys that appear twice, however they are spelled.
	_, err = canon.Canonicalize([]byte(`{"to": "a@example.com", "\u0074o": "b@example.com"}`))
	fmt.Println(errors.Is(err, canon.ErrDuplicateKey))
	// Output:
	// {"amount":1.5,"cc":[],"to":"finance@example.com"}
	// true canon: number cannot be represented exactly at byte 11
	// true
}

func ExampleLimits_Canonicalize() {
	strict := canon.Limits{MaxBytes: 64, MaxDepth: 2}
	out, err := strict.Canonicalize([]byte(`{"rows": [1, 2, 3]}`))
	fmt.Println(string(out), err)

	_, err = strict.Canonicalize([]byte(`{"rows": [[1], [2]]}`))
	fmt.Println(errors.Is(err, canon.ErrTooDeep))
	// Output:
	// {"rows":[1,2,3]} <nil>
	// true
}

func ExampleEffect_Digest() {
	e := canon.Effect{
		Tool:      "send_email",
		Args:      []byte(`{"to": "finance@example.com", "subject": "Q3"}`),
		Task:      "task-7",
		Principal: canon.Principal{User: "alice@example.com", Agent: "report-bot"},
	}
	d, err := e.Digest()
	if err != nil {
		panic(err)
	}

	// The same call with its arguments reordered has the same digest ...
	e.Args = []byte(`{"subject": "Q3", "to": "finance@example.com"}`)
	same, _ := e.Digest()

	// ... and a look-alike recipient does not.
	e.Args = []byte(`{"subject": "Q3", "to": "finance@exarnple.com"}`)
	other, _ := e.Digest()

	fmt.Println(d)
	fmt.Println(d.Equal(same), d.Equal(other))
	// Output:
	// 349fff24c09afcba8dd053b787ded4ac8519f645517740025487fae4c3e5cc83
	// true false
}

func ExampleEffect_Canonical() {
	e := canon.Effect{Tool: "read_file", Args: []byte(`{"path":"q3.csv"}`)}
	c, err := e.Canonical()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(c))
	// Output:
	// {"args":{"path":"q3.csv"},"audience":"","policy_version":"","principal":{"agent":"","delegations":[],"user":""},"refs":[],"step":"","task":"","tool":"read_file"}
}

func ExampleParseEffect() {
	e, err := canon.ParseEffect([]byte(`{"args":{"path":"q3.csv"},"audience":"","policy_version":"",
		"principal":{"agent":"","delegations":[],"user":""},"refs":[],"step":"","task":"","tool":"read_file"}`))
	fmt.Println(e.Tool, err)

	// A field spelled in another case is not the field.
	_, err = canon.ParseEffect([]byte(`{"args":{"path":"q3.csv"},"audience":"","policy_version":"",
		"principal":{"agent":"","delegations":[],"user":""},"refs":[],"step":"","task":"","Tool":"read_file"}`))
	fmt.Println(errors.Is(err, canon.ErrSyntax))
	// Output:
	// read_file <nil>
	// true
}

func ExampleParseDigest() {
	d, err := canon.ParseDigest("44136FA355B3678A1146AD16F7E8649E94FB4FC21FE77E8310C060F61CAAFF8A")
	fmt.Println(d, err)
	fmt.Println(d.Equal(canon.Sum([]byte(`{}`))))

	_, err = canon.ParseDigest("44136fa3")
	fmt.Println(errors.Is(err, canon.ErrBadDigest))
	// Output:
	// 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a <nil>
	// true
	// true
}

func ExampleResolveAll() {
	root, err := os.MkdirTemp("", "refs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	if err := os.WriteFile(filepath.Join(root, "q3.csv"), []byte("region,revenue\nwest,410\n"), 0o644); err != nil {
		panic(err)
	}

	refs, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: root}, []canon.Ref{
		{Name: "q3.csv", Kind: "file"},
		{Name: "https://example.com/terms", Kind: "url"},
	})
	if err != nil {
		panic(err)
	}
	for _, r := range refs {
		fmt.Printf("%s bound=%v size=%d sha256=%s unbound=%q\n", r.Name, r.Bound(), r.Size, r.SHA256.Short(), r.Unbound)
	}

	// A name that leaves the root is refused, and the call fails closed.
	_, err = canon.ResolveAll(context.Background(), canon.FileResolver{Root: root}, []canon.Ref{{Name: "../etc/passwd", Kind: "file"}})
	fmt.Println(errors.Is(err, canon.ErrRefEscapes))
	// Output:
	// q3.csv bound=true size=24 sha256=8b4a3ff5c4f4 unbound=""
	// https://example.com/terms bound=false size=0 sha256=000000000000 unbound="content of a url reference is not fetched"
	// true
}

func ExampleFileResolver_Resolve() {
	root, err := os.MkdirTemp("", "refs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	if err := os.WriteFile(filepath.Join(root, "q3.csv"), []byte("region,revenue\n"), 0o644); err != nil {
		panic(err)
	}
	res := canon.FileResolver{Root: root, MaxSize: 1 << 20}
	r, err := res.Resolve(context.Background(), canon.Ref{Name: "q3.csv", Kind: "file"})
	fmt.Println(r.Size, r.SHA256, err)

	_, err = res.Resolve(context.Background(), canon.Ref{Name: "https://example.com", Kind: "url"})
	fmt.Println(errors.Is(err, canon.ErrNotResolvable))
	// Output:
	// 15 50f739205e4a07e3918eaf4e276e090c016bb14be6b41d591150c6181b91b492 <nil>
	// true
}

// ExampleAppendString writes the canonical form of a fixed-shape object
// without a parse: keys in RFC 8785 order, strings with its escaping.
func ExampleAppendString() {
	out := []byte(`{"reason":`)
	out = canon.AppendString(out, "line one\nsaid \"no\" <to> \x01 é")
	out = append(out, '}')
	c, _ := canon.Canonicalize(out)
	fmt.Println(string(out))
	fmt.Println(string(c) == string(out))
	// Output:
	// {"reason":"line one\nsaid \"no\" <to> \u0001 é"}
	// true
}

func ExampleParse() {
	v, err := canon.Parse([]byte(`{ "to": "finance@example.com", "amount": 1.50 }`))
	if err != nil {
		panic(err)
	}
	amount, _ := v.Get("amount")
	fmt.Println(v.Canonical())
	fmt.Println(amount.Number())
	// Output:
	// {"amount":1.5,"to":"finance@example.com"}
	// 1.5
}

func ExampleSealArgs() {
	// A gate parses a call's arguments once and seals the effect from
	// that Value: the arguments are not read again.
	args, err := canon.Parse([]byte(`{"to":"finance@example.com"}`))
	if err != nil {
		panic(err)
	}
	e := canon.Effect{Tool: "send_email", PolicyVersion: "v1", Audience: "send_email",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}}
	s, err := canon.SealArgs(e, args)
	if err != nil {
		panic(err)
	}
	e.Args = []byte(`{ "to" : "finance@example.com" }`)
	d, _ := e.Digest()
	fmt.Println(s.Digest().Equal(d), s.Args().Canonical())
	// Output: true {"to":"finance@example.com"}
}

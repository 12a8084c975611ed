package foldnames_test

import (
	"fmt"

	"github.com/agentstepup/asu/adapters/internal/foldnames"
)

// ExampleCheck: a second payeeId in another case is refused; a name that
// only looks alike is not.
func ExampleCheck() {
	fmt.Println(foldnames.Check([]byte(`{"payeeId":"acme","payeeid":"mallory"}`)))
	fmt.Println(foldnames.Check([]byte(`{"lines":[{"id":"a","\u0130d":"b"}]}`)))
	fmt.Println(foldnames.Check([]byte(`{"id":"a","\u0131d":"b"}`)))
	// Output:
	// arguments hold member names that differ only in letter case
	// arguments hold member names that differ only in letter case
	// <nil>
}

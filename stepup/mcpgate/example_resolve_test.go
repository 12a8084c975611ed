package mcpgate_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/mcpgate"
)

// ExamplePathResolver binds a path reference as the filesystem server
// will resolve it: "~/q3.csv" is the file in the server's home, and the
// reference names it in Target for the card; a relative name without the
// server's base directory cannot be pinned to one file, so it is refused.
func ExamplePathResolver() {
	dir, err := os.MkdirTemp("", "asu-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.WriteFile(filepath.Join(dir, "q3.csv"), []byte("region,revenue\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	r := mcpgate.PathResolver{Root: dir, Home: dir} // the server runs with HOME=dir
	ref, err := r.Resolve(context.Background(), canon.Ref{Name: "~/q3.csv", Kind: mcpgate.PathKind})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref.Name, "is", filepath.Base(ref.Target), ref.Size, "bytes")
	_, err = r.Resolve(context.Background(), canon.Ref{Name: "q3.csv", Kind: mcpgate.PathKind})
	fmt.Println(errors.Is(err, mcpgate.ErrPathUnresolvable))
	// Output:
	// ~/q3.csv is q3.csv 15 bytes
	// true
}

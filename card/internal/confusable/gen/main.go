// Command gen writes confusables.bin, the table of package confusable, from
// the UTS #39 confusables data (confusables.txt) as
// github.com/mtibben/confusables carries it: for every code point whose
// skeleton differs from its own canonical decomposition, the skeleton.
//
//	go generate ./card/internal/confusable
//
// The file starts with one line of text naming the data and its Unicode
// version, then holds the entries in code point order, each as the
// distance from the previous code point (uvarint, the first counted from
// -1), the skeleton's length in bytes (uvarint) and the skeleton in UTF-8.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// sourceVersion is the Unicode version of confusables.txt in the module
// version go.mod names; check the header of its tables.go when updating,
// and change confusable.Version and the package doc with it.
const sourceVersion = "13.0.0"

func main() {
	out := flag.String("o", "confusables.bin", "output file")
	flag.Parse()
	var body []byte
	n, prev := 0, rune(-1)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		sk := confusables.Skeleton(s)
		if sk == norm.NFD.String(s) {
			continue
		}
		body = binary.AppendUvarint(body, uint64(r-prev))
		body = binary.AppendUvarint(body, uint64(len(sk)))
		body = append(body, sk...)
		prev = r
		n++
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "UTS #39 confusables, Unicode %s, %d entries\n", sourceVersion, n)
	b.Write(body)
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d entries, %d bytes", n, b.Len())
}

package catalog

import (
	"errors"
	"io/fs"
	"strconv"
)

// ErrCatalog is wrapped by every refusal of a catalog or test file, or
// of a file [DecodeJSON] reads; the [*Error] it comes in says where.
var ErrCatalog = errors.New("catalog: invalid")

// Error is one problem in a catalog, a test file or a file [DecodeJSON]
// reads: the file's name, the line and column (from 1; 0 when the file as
// a whole is at fault) of the value at fault, its JSON pointer (RFC 6901,
// e.g. "/tools/2/class") and what is wrong, in words that never quote a
// secret.
type Error struct {
	File    string
	Line    int
	Column  int
	Pointer string
	Problem string
}

// Error implements error: "catalog.json:12:7: /tools/2/class: problem".
func (e *Error) Error() string {
	where := e.File
	if where == "" {
		where = "catalog"
	}
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
		if e.Column > 0 {
			where += ":" + strconv.Itoa(e.Column)
		}
	}
	if e.Pointer != "" {
		where += ": " + e.Pointer
	}
	return where + ": " + e.Problem
}

// Unwrap returns [ErrCatalog].
func (e *Error) Unwrap() error { return ErrCatalog }

// openProblem is why a file did not open, without repeating its path.
func openProblem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Package termwidth tells how many columns the terminal a command writes
// to has, so that command-line views wrap at the terminal's real width
// rather than at a fixed one: a terminal narrower than the view wraps its
// lines itself, in pieces that no longer start where the view's lines do.
package termwidth

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// maxColumns bounds what a terminal or the environment may claim.
const maxColumns = 1000

// Columns returns the width in columns of the terminal w writes to: the
// terminal's own size when w is a terminal (on Unix, by the TIOCGWINSZ
// ioctl), else the COLUMNS environment variable when it holds a number,
// else def.
func Columns(w io.Writer, def int) int {
	if f, ok := w.(*os.File); ok {
		if n := terminalColumns(f); n > 0 && n <= maxColumns {
			return n
		}
	}
	return fromEnv(os.Getenv("COLUMNS"), def)
}

// fromEnv reads a COLUMNS value, def when it is not a usable width.
func fromEnv(v string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > maxColumns {
		return def
	}
	return n
}

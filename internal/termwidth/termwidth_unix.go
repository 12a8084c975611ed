//go:build unix

package termwidth

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns returns the columns of the terminal f is, or 0 when f
// is not a terminal.
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

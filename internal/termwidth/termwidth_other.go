//go:build !unix

package termwidth

import "os"

// terminalColumns returns 0: the terminal's size is read on Unix only;
// elsewhere COLUMNS or the default decides.
func terminalColumns(*os.File) int { return 0 }

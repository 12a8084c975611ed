//go:build !unix

package watermark

import "os"

// lock is a no-op where advisory locks are not at hand: keep one gate
// process per file by configuration.
func lock(*os.File) error { return nil }

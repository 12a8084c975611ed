//go:build unix

package watermark

import (
	"os"
	"syscall"
)

// lock takes an exclusive, non-blocking advisory lock on f, released
// when f is closed.
func lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

//go:build unix

package canon

import (
	"errors"
	"syscall"
)

// openNonblock makes opening a named pipe return at once instead of
// waiting for a writer; reads of regular files ignore it.
const openNonblock = syscall.O_NONBLOCK

// isNotRegularOpen reports whether opening failed because the name is a
// socket or a device without a driver (ENXIO, EOPNOTSUPP).
func isNotRegularOpen(err error) bool {
	return errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EOPNOTSUPP)
}

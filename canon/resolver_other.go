//go:build !unix

package canon

// openNonblock is zero where the platform has no non-blocking open; the
// descriptor check after opening still refuses what is not a regular file.
const openNonblock = 0

func isNotRegularOpen(error) bool { return false }

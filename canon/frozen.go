package canon

import "unsafe"

// frozen returns the bytes of b as a string without copying them, as
// strings.Builder does. The caller gives b up: nothing may write to its
// array afterwards, or the string would change. It is used only on the
// output buffer of a parse or a seal, which the function that allocated
// it converts as its last use and never hands out.
func frozen(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

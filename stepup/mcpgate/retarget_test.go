//go:build unix

package mcpgate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
)

// TestRetargetedNameRefused: an approved write whose name comes to mean
// another file before it runs does not run, even when that file holds the
// same bytes. The NFD spelling of "résumé.txt" was approved as the NFC
// file that existed; it is replaced by an NFD twin with the same content,
// which the server would then write instead. Execute re-resolves the
// name, finds another target, and refuses: the content alone would not
// have told the two apart.
func TestRetargetedNameRefused(t *testing.T) {
	w := newWorld(t)
	nfc, nfd := "r\u00e9sum\u00e9.txt", "re\u0301sume\u0301.txt"
	require.NoError(t, writeFile(w.dir, nfc, "cv"))
	h := w.connect(hostOptions{urlElicitation: true})
	defer h.decide(t, func(id stepup.TicketID) {
		assert.NoError(t, os.Remove(filepath.Join(w.dir, nfc)))
		assert.NoError(t, writeFile(w.dir, nfd, "cv"))
		_, err := w.h.Approve(id)
		assert.NoError(t, err)
	})()
	out, isErr := h.call(t, context.Background(), "write_file", `{"path":"`+nfd+`","content":"new"}`)
	assert.True(t, isErr)
	assert.Contains(t, out, "differs from what was approved")
	assert.Zero(t, w.upstream.count("write_file"))
}

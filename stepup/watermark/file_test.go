package watermark_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/watermark"
)

func TestFileKeepsWhatWasAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	f, err := watermark.OpenFile(path)
	require.NoError(t, err)
	got, err := f.Load(t.Context())
	require.NoError(t, err)
	assert.Empty(t, got, "a new file holds no entry")
	var want [][]byte
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := fmt.Appendf(nil, `{"n":%d}`, i)
			assert.NoError(t, f.Append(t.Context(), e))
			mu.Lock()
			want = append(want, e)
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.NoError(t, f.Close())
	f, err = watermark.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	got, err = f.Load(t.Context())
	require.NoError(t, err)
	assert.ElementsMatch(t, want, got, "every append, whole, after a reopen")
}

func TestFileReplaceIsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	f, err := watermark.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Append(t.Context(), []byte("a")))
	require.NoError(t, f.Replace(t.Context(), [][]byte{[]byte("b"), []byte("c")}))
	require.NoError(t, f.Append(t.Context(), []byte("d")))
	got, err := f.Load(t.Context())
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("b"), []byte("c"), []byte("d")}, got)
	_, err = os.Stat(path + ".new")
	assert.ErrorIs(t, err, os.ErrNotExist, "no temporary file is left")
}

func TestFileIgnoresATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	require.NoError(t, os.WriteFile(path, []byte("a\nb\nhalf an ent"), 0o600))
	f, err := watermark.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.Load(t.Context())
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("a"), []byte("b")}, got)
}

func TestFileRefusesBadEntries(t *testing.T) {
	f, err := watermark.OpenFile(filepath.Join(t.TempDir(), "marks"))
	require.NoError(t, err)
	defer f.Close()
	for name, e := range map[string][]byte{
		"empty":      nil,
		"a newline":  []byte("a\nb"),
		"over bound": bytes.Repeat([]byte("x"), plug.MaxWatermarkEntry+1),
	} {
		assert.Error(t, f.Append(t.Context(), e), name)
		assert.Error(t, f.Replace(t.Context(), [][]byte{e}), name)
	}
	assert.NoError(t, f.Append(t.Context(), bytes.Repeat([]byte("x"), plug.MaxWatermarkEntry)))
}

func TestFileIsHeldByOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	f, err := watermark.OpenFile(path)
	require.NoError(t, err)
	_, err = watermark.OpenFile(path)
	assert.ErrorIs(t, err, watermark.ErrLocked, "a second opener is refused")
	require.NoError(t, f.Replace(t.Context(), [][]byte{[]byte("a")}))
	_, err = watermark.OpenFile(path)
	assert.ErrorIs(t, err, watermark.ErrLocked, "the lock survives a replace")
	require.NoError(t, f.Close())
	g, err := watermark.OpenFile(path)
	require.NoError(t, err, "closed, it can be opened again")
	require.NoError(t, g.Close())
	assert.Error(t, f.Append(t.Context(), []byte("a")), "a closed file takes nothing")
}

func TestFileRefusesAFileOverItsBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("a\n"), watermark.MaxFileSize/2+1), 0o600))
	f, err := watermark.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Load(t.Context())
	assert.Error(t, err)
}

// TestPeerReadsWithoutWriting: a peer's file is read as the file's own
// Load reads it (a torn last line left out) while its process holds it;
// a missing one holds no marks; nothing is ever written to it.
func TestPeerReadsWithoutWriting(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "peer.mark")
	p := watermark.Peer(path)
	got, err := p.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "a peer that has not run yet")
	f, err := watermark.OpenFile(path) // the peer runs and holds its file
	require.NoError(t, err)
	defer f.Close()
	for _, e := range []string{"one", "two"} {
		require.NoError(t, f.Append(ctx, []byte(e)))
	}
	torn, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = torn.WriteString("thr")
	require.NoError(t, err)
	require.NoError(t, torn.Close())
	got, err = p.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("one"), []byte("two")}, got)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Error(t, p.Append(ctx, []byte("x")))
	assert.Error(t, p.Replace(ctx, [][]byte{[]byte("x")}))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a peer's file is never written")
}

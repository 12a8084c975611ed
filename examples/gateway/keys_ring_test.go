package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/keyring"
)

var keysT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func keysNow() time.Time { return keysT0 }

// TestKeysRotateCommand: rotate adds a current key and retires the old one
// with the grace, writes the file back whole (mode 0600), and prints one
// line of ids, never a secret.
func TestKeysRotateCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	var out bytes.Buffer
	live, err := serviceKeys(file, nil, &out)
	require.NoError(t, err)
	old := live.Ring().Current()
	assert.Contains(t, out.String(), old.ID)

	out.Reset()
	require.NoError(t, runKeys(&out, []string{"rotate", "-keys", file, "-grace", "2h"}, keysNow))
	r, err := readRing(file)
	require.NoError(t, err)
	keys := r.Keys()
	require.Len(t, keys, 2)
	assert.Equal(t, keyring.Retired, keys[0].State)
	assert.Equal(t, keysT0.Add(2*time.Hour), keys[0].GraceUntil.UTC())
	assert.Equal(t, "keys: current "+r.Current().ID+"; retired "+old.ID+" until 2026-12-01T14:00:00Z\n", out.String())
	for _, k := range keys {
		assert.NotContains(t, out.String(), hex.EncodeToString(k.Secret))
	}
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(file))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

// TestKeysAddThenPromote is the rotation of replicas: add (verify-only,
// every replica), then promote by id; the old key is retired with the
// grace; promote refuses an unknown id and leaves the file as it was.
func TestKeysAddThenPromote(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	live, err := serviceKeys(file, bytes.Repeat([]byte{5}, 32), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, keyring.DefaultID(bytes.Repeat([]byte{5}, 32)), live.Ring().Current().ID, "created from -key-file's key")
	var out bytes.Buffer
	require.NoError(t, runKeys(&out, []string{"add", "-keys", file}, keysNow))
	r, err := readRing(file)
	require.NoError(t, err)
	require.Len(t, r.Keys(), 2)
	added := r.Keys()[1]
	assert.Equal(t, keyring.Verify, added.State)
	assert.Contains(t, out.String(), "keys promote -id "+added.ID)

	before, err := os.ReadFile(file)
	require.NoError(t, err)
	err = runKeys(&out, []string{"promote", "-keys", file, "-id", "nope"}, keysNow)
	require.ErrorIs(t, err, keyring.ErrUnknownKey)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	require.NoError(t, runKeys(&out, []string{"promote", "-keys", file, "-id", added.ID}, keysNow))
	r, err = readRing(file)
	require.NoError(t, err)
	assert.Equal(t, added.ID, r.Current().ID)
	assert.Equal(t, keyring.Retired, r.Keys()[0].State)

	out.Reset()
	require.NoError(t, runKeys(&out, []string{"list", "-keys", file}, keysNow))
	assert.Contains(t, out.String(), added.ID+" (current)")
	out.Reset()
	require.NoError(t, runKeys(&out, []string{"prune", "-keys", file}, func() time.Time { return keysT0.Add(48 * time.Hour) }))
	assert.Contains(t, out.String(), "pruned 1")
}

// TestKeysFileErrorsNameFileLineAndField: a bad ring file is refused by
// the commands and at start with the file, line and field, never the
// secret; one readable by others is refused too.
func TestKeysFileErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	secret := strings.Repeat("ab", 32)
	require.NoError(t, os.WriteFile(file, []byte("a current hex:"+secret+"\nb retired hex:"+strings.Repeat("cd", 32)+" soon\n"), 0o600))
	err := runKeys(&bytes.Buffer{}, []string{"list", "-keys", file}, keysNow)
	require.Error(t, err)
	assert.Contains(t, err.Error(), file+":2: field grace-until")
	assert.NotContains(t, err.Error(), secret)
	_, err = serviceKeys(file, nil, &bytes.Buffer{})
	assert.Contains(t, err.Error(), file+":2: field grace-until")

	require.NoError(t, os.WriteFile(file, []byte("a current hex:"+secret+"\n"), 0o644))
	require.NoError(t, os.Chmod(file, 0o644))
	_, err = readRing(file)
	assert.ErrorContains(t, err, "readable by others")
	assert.Error(t, runKeys(&bytes.Buffer{}, []string{"bogus", "-keys", file}, keysNow))
	assert.Error(t, runKeys(&bytes.Buffer{}, nil, keysNow))
}

// TestWatchKeysPicksUpARotation: a running gateway's ring follows the
// file: a rotation written by the command is picked up, a broken file is
// logged and the ring in use kept.
func TestWatchKeysPicksUpARotation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	live, err := serviceKeys(file, nil, &bytes.Buffer{})
	require.NoError(t, err)
	old := live.Ring().Current().ID
	log := &lockedBuffer{}
	stop := watchKeys(context.Background(), file, live, log, time.Millisecond)
	defer stop()

	require.NoError(t, runKeys(&bytes.Buffer{}, []string{"rotate", "-keys", file}, keysNow))
	require.Eventually(t, func() bool { return live.Ring().Current().ID != old }, 10*time.Second, time.Millisecond)
	cur := live.Ring().Current().ID

	require.NoError(t, os.WriteFile(file, []byte("x bogus hex:00\n"), 0o600))
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "keeping the keys in use") }, 10*time.Second, time.Millisecond)
	assert.Equal(t, cur, live.Ring().Current().ID)
	assert.NotContains(t, log.String(), "hex:00")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/stepup/remote"
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

// TestReplicasRotateKeysWhileServing: two gateways on one store, each
// reading its own copy of the ring file, rotate in the documented order
// (add everywhere, then promote everywhere) while they serve. Calls the
// policy allowed on one replica before the rotation execute on the other
// after it; calls allowed after it too; and the audit export signs its
// checkpoint with the ring, which the verify command accepts with the
// ring's public file, as printed.
func TestReplicasRotateKeysWhileServing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the verify command")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "asu.db")
	tokens := filepath.Join(dir, "tokens.json")
	files := []string{filepath.Join(t.TempDir(), "keys"), filepath.Join(t.TempDir(), "keys")}
	_, err := serviceKeys(files[0], nil, &bytes.Buffer{})
	require.NoError(t, err)
	copyKeys := func() {
		b, err := os.ReadFile(files[0])
		require.NoError(t, err)
		require.NoError(t, writeAtomic(files[1], b, 0o600))
	}
	copyKeys()
	var logs [2]*lockedBuffer
	var gws [2]*gatewayProc
	for i := range 2 {
		logs[i] = &lockedBuffer{}
		gws[i] = startGateway(t, options{db: db, files: dir, tokens: tokens, keys: files[i], log: logs[i],
			keysEvery: 5 * time.Millisecond, instance: "replica-" + string(rune('a'+i))})
	}
	token := gws[0].Token
	clients := [2]*remote.Client{}
	for i := range 2 {
		clients[i], err = remote.NewClient(gws[i].AgentURL, token, nil)
		require.NoError(t, err)
	}
	reloaded := func(n int) {
		for i := range 2 {
			require.Eventually(t, func() bool { return strings.Count(logs[i].String(), "keys: reloaded") >= n },
				10*time.Second, time.Millisecond, "replica %d reloads", i)
		}
	}
	propose := func(i int) stepup.TicketID {
		tk, err := clients[i].Propose(ctx, readCall("q3.csv"))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusAllowed, tk.Status, tk.Reason)
		return tk.ID
	}
	before := []stepup.TicketID{propose(0), propose(1)}

	var out bytes.Buffer
	require.NoError(t, cli(ctx, []string{"keys", "add", "-keys", files[0]}, &out, &out))
	copyKeys()
	reloaded(1)
	during := []stepup.TicketID{propose(0), propose(1)}
	r, err := readRing(files[0])
	require.NoError(t, err)
	added := r.Keys()[1].ID
	require.NoError(t, cli(ctx, []string{"keys", "promote", "-keys", files[0], "-id", added, "-grace", "1h"}, &out, &out))
	copyKeys()
	reloaded(2)
	after := []stepup.TicketID{propose(0), propose(1)}

	for k, id := range append(append(before, during...), after...) {
		_, err := clients[1-k%2].Execute(ctx, id) // on the other replica
		require.NoError(t, err, "ticket %d", k)
	}
	assert.NotContains(t, out.String(), "hex:")

	file := filepath.Join(dir, "audit.jsonl")
	out.Reset()
	require.NoError(t, cli(ctx, []string{"-db", db, "-audit", file, "-keys", files[0]}, &out, &out), out.String())
	printed := regexp.MustCompile(`(?m)^verify: go run ./examples/verify (.*)$`).FindStringSubmatch(out.String())
	require.Len(t, printed, 2, out.String())
	assert.Contains(t, printed[1], files[0]+".pub")
	res, err := exec.Command(verifyCLI(t), strings.Fields(printed[1])...).CombinedOutput()
	require.NoError(t, err, string(res))
	assert.Contains(t, string(res), "through the signed checkpoint")
}

// Package watermark keeps a gate's high-water marks in a file beside the
// service, where a rollback of the gate's store cannot reach them.
//
// A gate given a [File] ([gate.WithWatermark]) writes, before every run of
// an executor, how far its store's audit chain had gone, the chain's head
// hash and the newest time the store's clock had shown. A store restored
// from a backup, one that lost its write-ahead log, a PostgreSQL failover
// to a standby that had not received the last commits, a point-in-time
// restore or a clock stepped back all leave the store behind its mark:
// the gate then refuses to decide or run anything ([stepup.ErrRolledBack])
// until an operator reviews the store and reconciles it
// ([gate.Admin.Reconcile]).
//
// Keep the file on a different disk or volume than the database where you
// can, never inside the database's backups, and one file per gate
// process. A new file on a store that already has history holds too: the
// store may be a restored one and the lost file the one that saw what ran.
// Replicas of one store read each other's files as [Peer]s when they
// start, and a new replica starts from a copy of a running one's file.
// The file is append-only, one entry a line; the gate compacts it now and
// then. A last line cut short by a crash is an append that never
// returned, so nothing ran under it, and it is ignored.
//
// [gate.WithWatermark]: https://pkg.go.dev/github.com/agentstepup/asu/stepup/gate#WithWatermark
// [gate.Admin.Reconcile]: https://pkg.go.dev/github.com/agentstepup/asu/stepup/gate#Admin.Reconcile
// [stepup.ErrRolledBack]: https://pkg.go.dev/github.com/agentstepup/asu/stepup#ErrRolledBack
package watermark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentstepup/asu/stepup/plug"
)

// MaxFileSize bounds the file [File.Load] reads. The gate compacts the
// file long before it gets there.
const MaxFileSize = 64 << 20

// ErrLocked means another process holds the file.
var ErrLocked = errors.New("watermark: the file is held by another process")

// File keeps marks in one append-only file. It implements
// [plug.Watermarks] and is safe for concurrent use.
type File struct {
	path string
	mu   sync.Mutex
	f    *os.File // open for appending; holds the lock
}

var _ plug.Watermarks = (*File)(nil)

// OpenFile opens (or creates, mode 0600) the marks file at path and takes
// an exclusive lock on it, so that two gate processes never share one.
// Its directory must exist.
func OpenFile(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("watermark: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrLocked, path, err)
	}
	return &File{path: path, f: f}, nil
}

// Path returns the file's path.
func (m *File) Path() string { return m.path }

// Close releases the file and its lock.
func (m *File) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}

// Load implements [plug.Watermarks].
func (m *File) Load(context.Context) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil, fmt.Errorf("watermark: %s is closed", m.path)
	}
	return readEntries(m.path, false)
}

// readEntries reads the entries of the marks file at path; a missing file
// holds none when missingIsEmpty.
func readEntries(path string, missingIsEmpty bool) ([][]byte, error) {
	f, err := os.Open(path)
	if missingIsEmpty && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("watermark: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("watermark: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("watermark: %s is over %d bytes", path, MaxFileSize)
	}
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // an append cut short: it never returned, nothing ran under it
		}
		out = append(out, data[:i:i])
		data = data[i+1:]
	}
	return out, nil
}

// Peer is the marks file of another gate process of the same store, which
// a gate reads when it starts ([gate.WithWatermark]'s peers) and never
// writes. It takes no lock: the peer may be running. A missing file holds
// no marks (the peer has not run yet).
type Peer string

var _ plug.Watermarks = Peer("")

// Load implements [plug.Watermarks].
func (p Peer) Load(context.Context) ([][]byte, error) { return readEntries(string(p), true) }

// Append implements [plug.Watermarks]: a peer's marks are never written.
func (p Peer) Append(context.Context, []byte) error { return errPeer }

// Replace implements [plug.Watermarks]: a peer's marks are never written.
func (p Peer) Replace(context.Context, [][]byte) error { return errPeer }

var errPeer = errors.New("watermark: a peer's marks are read, never written")

// Append implements [plug.Watermarks]: the entry is on disk when it
// returns.
func (m *File) Append(_ context.Context, entry []byte) error {
	if err := check(entry); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return fmt.Errorf("watermark: %s is closed", m.path)
	}
	line := make([]byte, 0, len(entry)+1)
	line = append(append(line, entry...), '\n')
	if _, err := m.f.Write(line); err != nil {
		return fmt.Errorf("watermark: append to %s: %w", m.path, err)
	}
	if err := m.f.Sync(); err != nil {
		return fmt.Errorf("watermark: sync %s: %w", m.path, err)
	}
	return nil
}

// Replace implements [plug.Watermarks]: a new file is written beside the
// old one, synced and renamed over it, and the directory synced.
func (m *File) Replace(_ context.Context, entries [][]byte) error {
	var buf bytes.Buffer
	for _, e := range entries {
		if err := check(e); err != nil {
			return err
		}
		buf.Write(e)
		buf.WriteByte('\n')
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return fmt.Errorf("watermark: %s is closed", m.path)
	}
	tmp := m.path + ".new"
	if err := writeSynced(tmp, buf.Bytes()); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return fmt.Errorf("%w: %s: %v", ErrLocked, tmp, err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		f.Close()
		return fmt.Errorf("watermark: replace %s: %w", m.path, err)
	}
	if err := syncDir(filepath.Dir(m.path)); err != nil {
		f.Close()
		return err
	}
	m.f.Close()
	m.f = f
	return nil
}

func check(entry []byte) error {
	if len(entry) == 0 || len(entry) > plug.MaxWatermarkEntry || bytes.IndexByte(entry, '\n') >= 0 {
		return fmt.Errorf("watermark: an entry is 1 to %d bytes with no newline", plug.MaxWatermarkEntry)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("watermark: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("watermark: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("watermark: sync %s: %w", dir, err)
	}
	return nil
}

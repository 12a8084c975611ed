package mcpgate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessions names host sessions for the gate, which groups a session's
// calls for merging, caps and lockouts, and remembers the untrusted
// content each session has read, its taint. A transport with session ids
// (streamable HTTP) names its own; stdio and in-memory connections have
// none, so each gets a random id on its first call. Both are dropped when
// the session closes.
type sessions struct {
	mu    sync.Mutex
	ids   map[*mcp.ServerSession]*sessionEntry
	taint map[string][]string // by gate session id, each entry once
}

// sessionEntry is a host session being watched: its gate id and what to
// do when it closes. One goroutine per session waits for that.
type sessionEntry struct {
	id      string
	onClose []func()
}

func newSessions() *sessions {
	return &sessions{ids: map[*mcp.ServerSession]*sessionEntry{}, taint: map[string][]string{}}
}

// taintOf returns what untrusted content session has read so far.
func (s *sessions) taintOf(session string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.taint[session])
}

// addTaint records that session has read untrusted content what.
func (s *sessions) addTaint(session, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.taint[session], what) {
		s.taint[session] = append(s.taint[session], what)
	}
}

// of returns the gate's session id for ss.
func (s *sessions) of(ss *mcp.ServerSession) (string, error) {
	if ss == nil {
		return "", fmt.Errorf("no MCP session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.entryLocked(ss)
	if err != nil {
		return "", err
	}
	return e.id, nil
}

// onClose runs f once ss has closed (at once if it has already).
func (s *sessions) onClose(ss *mcp.ServerSession, f func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.entryLocked(ss)
	if err != nil {
		return err
	}
	e.onClose = append(e.onClose, f)
	return nil
}

// entryLocked returns the entry of ss, watching it from now on.
func (s *sessions) entryLocked(ss *mcp.ServerSession) (*sessionEntry, error) {
	if e, ok := s.ids[ss]; ok {
		return e, nil
	}
	id := "mcp:" + ss.ID()
	if ss.ID() == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("session id: %w", err)
		}
		id = "mcp:conn-" + hex.EncodeToString(b[:])
	}
	e := &sessionEntry{id: id}
	s.ids[ss] = e
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.ids, ss)
		delete(s.taint, id)
		fs := e.onClose
		e.onClose = nil
		s.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}()
	return e, nil
}

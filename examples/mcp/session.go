package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIDs names MCP sessions for the gate, which groups a session's
// calls for merging, caps and lockouts. A transport with session ids
// (streamable HTTP) names its own; stdio and in-memory connections have
// none, so each gets a random id on its first call, dropped when it
// closes.
type sessionIDs struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]string
}

func newSessionIDs() *sessionIDs {
	return &sessionIDs{ids: map[*mcp.ServerSession]string{}}
}

// of returns the gate's session id for ss.
func (s *sessionIDs) of(ss *mcp.ServerSession) (string, error) {
	if ss == nil {
		return "", fmt.Errorf("no MCP session")
	}
	if id := ss.ID(); id != "" {
		return "mcp:" + id, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[ss]; ok {
		return id, nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	id := "mcp:conn-" + hex.EncodeToString(b[:])
	s.ids[ss] = id
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.ids, ss)
		s.mu.Unlock()
	}()
	return id, nil
}

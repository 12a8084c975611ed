package gateway

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/passkey"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/internal/wire"
	"github.com/agentstepup/asu/stepup/remote"
)

// FuzzDecodeCall: the strict reader of propose bodies never panics, never
// accepts a body with a duplicate key, and whatever it accepts encoding/json
// reads the same way.
func FuzzDecodeCall(f *testing.F) {
	f.Add([]byte(`{"tool":"send_email","args":{"to":"a@example.com"},"session":"s","principal":{"user":"user:dana","agent":"agent:reports"}}`))
	f.Add([]byte(`{"tool":"a","tool":"b"}`))
	f.Add([]byte(`{"tool":"a","Tool":"b"}`))
	f.Add([]byte(`{"args":{"a":[{"b":1,"b":2}]}}`))
	f.Add([]byte(`{"principal":{"agent":"agent:a","Agent":"agent:b"}}`))
	f.Add([]byte(`[[[[[[]]]]]]`))
	for _, depth := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1} {
		f.Add([]byte(`{"tool":"t","args":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`))
	}
	f.Add([]byte(`{"tool":"t","args":{"n":1e400}}`))
	f.Add([]byte(`{"tool":"t","args":{"a":"\u0061","\u0061":1}}`))
	f.Add([]byte(`{"tool":"t","args":{"s":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := decodeCall(body)
		// The one-pass reading and the token-by-token one agree on every
		// body: what each accepts and what it reads, the arguments up to
		// their canonical form (the one pass hands them over canonical).
		slow, serr := decodeCallTokens(body)
		if c, cerr := canon.Canonicalize(slow.Args); cerr == nil && serr == nil && string(c) != string(slow.Args) {
			slow.Args = c
		}
		if (err == nil) != (serr == nil) || !reflect.DeepEqual(w, slow) {
			t.Fatalf("one pass: %+v, %v; token by token: %+v, %v", w, err, slow, serr)
		}
		if err != nil {
			if !errors.Is(err, remote.ErrInvalid) {
				t.Fatalf("refusal does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if noDuplicates(body) != nil {
			t.Fatal("accepted a body with a duplicate key")
		}
		var plain wire.Call
		if err := json.Unmarshal(body, &plain); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if c, cerr := canon.Canonicalize(plain.Args); cerr == nil {
			plain.Args = c
		}
		if plain.Tool != w.Tool || plain.Principal.Agent != w.Principal.Agent || string(plain.Args) != string(w.Args) {
			t.Fatal("strict and plain readings differ")
		}
	})
}

func TestNoDuplicates(t *testing.T) {
	tests := []struct {
		body string
		dup  bool
	}{
		{`{"a":1,"b":{"a":1}}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"x":1,"x":1}}`, true},
		{`{"a":[{"x":1},{"x":1}]}`, false},
		{`{"a":[{"x":1,"x":2}]}`, true},
		{`{"\u0061":1,"a":2}`, true},
		{`{}`, false},
		{`[{},{"k":[],"k":{}}]`, true},
	}
	for _, tt := range tests {
		err := noDuplicates([]byte(tt.body))
		assert.Equal(t, tt.dup, err != nil, "%s: %v", tt.body, err)
	}
	_, err := decodeCall([]byte(`null`))
	assert.ErrorIs(t, err, remote.ErrInvalid, "a call is an object")
}

// FuzzMisdirected: the origin check of page requests never panics, and
// either passes the request or sends it to the relying party's own origin,
// never to a host the request named.
func FuzzMisdirected(f *testing.F) {
	f.Add("127.0.0.1:8701", "/approve/x")
	f.Add("localhost:8701", "/enroll?invite=a.b")
	f.Add("evil.example:8701", "//evil.example/x")
	f.Add("[::1]:8701", "/approve/%2F%2Fevil")
	f.Fuzz(func(t *testing.T, host, uri string) {
		s := &Site{rp: passkey.RelyingParty{ID: "localhost", Origin: "http://localhost:8701"}}
		to := s.misdirected(host, uri)
		if to == "" {
			if !strings.EqualFold(host, "localhost:8701") {
				t.Fatalf("host %q passed", host)
			}
			return
		}
		u, err := url.Parse(to)
		if err == nil && u.Host != "localhost:8701" {
			t.Fatalf("sent to %q", u.Host)
		}
		if !strings.HasPrefix(to, "http://localhost:8701") {
			t.Fatalf("sent to %q", to)
		}
	})
}

// FuzzViewToken: the view-token check never panics, and accepts a token
// only if it is, byte for byte, the token the site made for that ticket.
func FuzzViewToken(f *testing.F) {
	v, err := newViews(nil)
	if err != nil {
		f.Fatal(err)
	}
	good, err := v.issue("t-1")
	if err != nil {
		f.Fatal(err)
	}
	f.Add("t-1", good)
	f.Add("t-2", good)
	f.Add("t-1", good+"A")
	f.Add("t-1", "")
	f.Add("", good)
	f.Fuzz(func(t *testing.T, id, token string) {
		if v.valid(stepup.TicketID(id), token) && (id != "t-1" || token != good) {
			t.Fatalf("accepted a token the site did not make: %q for %q", token, id)
		}
	})
}

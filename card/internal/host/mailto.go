package host

import (
	"strings"
	"unicode/utf8"
)

// A mailto: URI (RFC 6068) names its recipients in two places: its path,
// a comma-separated list of addresses, and its header fields, where "to",
// "cc" and "bcc" (any case) add more. Both are percent-encoded: a mail
// client decodes every field name and value once, so "bcc=x%40evil.net"
// sends to evil.net although no @ follows it in the text. The card reads
// the URI as a mail client does and lists the host of every recipient; the
// value is exactly one host, and may carry a TRUSTED badge, only when every
// recipient is at that same host.
//
// Any other header field is percent-decoded too and its name and value
// searched for hosts like any text. Some clients honour fields that carry
// addresses ("reply-to", "from", "resent-to", and whatever a client
// invents), and the card cannot know every client's list, so a host named
// in any other field (an address in "body" included) is listed and the
// value is never trusted, as a text naming a second host never is.
// Subject and body without a host cost nothing.

// maxRecipients bounds the recipients a mailto: URI is read for; a URI
// naming more is not exactly one host.
const maxRecipients = 2 * maxMentioned

// mailtoURI is what parseMailto finds in a mailto: URI.
type mailtoURI struct {
	hosts []string // the host of each recipient that parses, in order, without repeats
	texts []string // decoded text that is not a recipient: searched for hosts
	decoy bool     // a recipient's local part or display name holds an @
	relay []string // hosts recipients' local parts route the mail on to
	route bool     // a recipient's local part holds a relay or source route
	whole bool     // every recipient parses, every escape is valid, and there is one
}

// parseMailto reads rest, the text after "mailto:", as RFC 6068 does.
func parseMailto(rest string) mailtoURI {
	var m mailtoURI
	m.whole = true
	path, query, hasQuery := strings.Cut(rest, "?")
	m.recipients(path)
	for hasQuery {
		var field string
		field, query, hasQuery = strings.Cut(query, "&")
		name, value, _ := strings.Cut(field, "=")
		name, okName := percentDecode(name)
		if !okName {
			m.whole = false
		}
		// A client that trims the name (" bcc") still reads a recipient.
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "to", "cc", "bcc":
			m.recipients(value)
		default:
			// A header field's name is searched too: "x%40evil.net=" is
			// no field a client knows, but it names a host.
			v, ok := percentDecode(value)
			m.whole = m.whole && ok
			if NamesHost(name) {
				m.texts = append(m.texts, name)
			}
			if NamesHost(v) {
				m.texts = append(m.texts, v)
			}
		}
	}
	if len(m.hosts) == 0 {
		m.whole = false
	}
	return m
}

// recipients reads a percent-encoded, comma-separated list of addresses.
// A comma inside a quoted local part splits it like any other: such a
// recipient does not parse, and the value is not exactly one host.
func (m *mailtoURI) recipients(list string) {
	dec, ok := percentDecode(list)
	if !ok || !utf8.ValidString(dec) {
		m.whole = false
	}
	if list == "" {
		return
	}
	for _, a := range strings.Split(dec, ",") {
		a = strings.Trim(a, " ")
		if a == "" {
			continue // "a@x.com," or an empty "cc=" adds no one
		}
		t, ok := parseMailbox(a)
		if !ok || len(m.hosts) >= maxRecipients {
			m.whole = false
			if NamesHost(a) {
				m.texts = append(m.texts, a)
			}
			continue
		}
		m.decoy = m.decoy || t.decoy
		m.route = m.route || t.relays
		m.relay = append(m.relay, t.relay...)
		if !containsHost(m.hosts, t.host) {
			m.hosts = append(m.hosts, t.host)
		}
	}
}

// containsHost reports h in hosts, up to case and trailing dots.
func containsHost(hosts []string, h string) bool {
	for _, g := range hosts {
		if strings.EqualFold(hostKey(g), hostKey(h)) {
			return true
		}
	}
	return false
}

// percentDecode decodes every valid %XX escape of s once, as a mail client
// does; ok is false when s holds a % that starts no valid escape (left as
// it is).
func percentDecode(s string) (string, bool) {
	k := strings.IndexByte(s, '%')
	if k < 0 {
		return s, true
	}
	ok := true
	b := make([]byte, 0, len(s))
	b = append(b, s[:k]...)
	for i := k; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
				i += 2
				continue
			}
			ok = false
		}
		b = append(b, c)
	}
	return string(b), ok
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

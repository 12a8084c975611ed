package inbox

import (
	"encoding/json"
	"strings"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
)

// lineJSON is what the queue's one line of a ticket shows before it is
// opened: its class and the effect's key field (where it goes, how
// much), both from the card the gate rendered, never from agent text.
type lineJSON struct {
	Class    string `json:"class"`
	Key      string `json:"key,omitempty"`
	Warnings int    `json:"warnings"`
}

// progressJSON is a ticket's approval progress as the page shows it.
type progressJSON struct {
	// Needed is how many people must approve; Signed are those whose
	// approval counts, in order; Awaited may still approve.
	Needed  int      `json:"needed"`
	Signed  []string `json:"signed"`
	Awaited []string `json:"awaited"`
	// Sentence words it: "1 of 2 approved by user:dana; waiting for one
	// more of finance"; "" when there is nothing to say.
	Sentence string `json:"sentence,omitempty"`
}

// lineOf reads the line of a ticket from its card.
func lineOf(c *card.Card, model []byte) lineJSON {
	var m struct {
		Tool struct {
			Class string `json:"class"`
		} `json:"tool"`
	}
	_ = json.Unmarshal(model, &m) // the gate's own card model; a bad one shows no class
	l := lineJSON{Class: m.Tool.Class}
	if c == nil {
		return l
	}
	s := c.Summary()
	var parts []string
	if len(s.Recipients) > 0 {
		domains := make([]string, len(s.Recipients))
		for i, d := range s.Recipients {
			domains[i] = d.Domain
		}
		parts = append(parts, "to "+strings.Join(domains, ", "))
	}
	if s.Amount != "" {
		parts = append(parts, s.Amount)
	}
	l.Key, l.Warnings = strings.Join(parts, " · "), s.Warnings
	return l
}

// progressOf is p on the page.
func progressOf(p plug.Progress) progressJSON {
	out := progressJSON{Needed: max(p.Needed, 1), Signed: []string{}, Awaited: []string{}, Sentence: p.Sentence()}
	for _, s := range p.Signed {
		out.Signed = append(out.Signed, s.Approver)
	}
	out.Awaited = append(out.Awaited, p.Awaited...)
	return out
}

// others are those awaited who are not the viewer.
func others(awaited []string, viewer string) []string {
	out := make([]string, 0, len(awaited))
	for _, a := range awaited {
		if a != viewer {
			out = append(out, a)
		}
	}
	return out
}

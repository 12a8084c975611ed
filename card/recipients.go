package card

import (
	"encoding/json"
	"fmt"
)

// RecipientsOfJSON returns what [Card.Summary] returns as Recipients for
// the card whose JSON is cardJSON (as [Card.JSON] wrote it, and as a
// store keeps it), without building the rest of the card: for code that
// holds a ticket's stored card and needs where its effect goes, such as
// flood control counting a denial against the target. A card of a custom
// renderer names no recipients. Its work is linear in len(cardJSON).
func RecipientsOfJSON(cardJSON []byte) ([]SummaryDomain, error) {
	var c struct {
		Args []struct {
			Role  string       `json:"role"`
			Value recipientsOf `json:"value"`
		} `json:"args"`
	}
	if err := json.Unmarshal(cardJSON, &c); err != nil {
		return nil, fmt.Errorf("card: recipients of a card's JSON: %w", err)
	}
	var out []SummaryDomain
	for i := range c.Args {
		if c.Args[i].Role == "recipient" {
			out = c.Args[i].Value.appendTo(out)
		}
	}
	return out, nil
}

// recipientsOf is the part of a node's JSON that names its hosts: its
// domains, its items' and its members', as appendRecipients reads a node.
type recipientsOf struct {
	Domains domainsOf      `json:"domains"`
	Items   []recipientsOf `json:"items"`
	Members []struct {
		KeyDomains domainsOf    `json:"key_domains"`
		Value      recipientsOf `json:"value"`
	} `json:"members"`
}

type domainsOf []struct {
	ASCII       string   `json:"ascii"`
	Registrable string   `json:"registrable"`
	Trusted     bool     `json:"trusted"`
	Warnings    []string `json:"warnings"`
}

func (n *recipientsOf) appendTo(out []SummaryDomain) []SummaryDomain {
	out = n.Domains.appendTo(out)
	for i := range n.Items {
		out = n.Items[i].appendTo(out)
	}
	for i := range n.Members {
		out = n.Members[i].KeyDomains.appendTo(out)
		out = n.Members[i].Value.appendTo(out)
	}
	return out
}

func (ds domainsOf) appendTo(out []SummaryDomain) []SummaryDomain {
	for _, d := range ds {
		out = addRecipient(out, d.ASCII, d.Registrable, d.Trusted, len(d.Warnings) > 0)
	}
	return out
}

package card_test

import (
	"strings"

	"golang.org/x/net/html"

	"github.com/agentstepup/asu/card"
)

// htmlVisible returns the text a browser shows for c's HTML view, without
// the fingerprint footer, with one marker per element boundary so that text
// in different elements cannot run together.
func htmlVisible(c *card.Card) string {
	z := html.NewTokenizer(strings.NewReader(string(c.HTML())))
	var b strings.Builder
	inFooter := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			if string(name) == "footer" {
				inFooter = true
			}
			b.WriteString("<")
		case html.EndTagToken:
			name, _ := z.TagName()
			if string(name) == "footer" {
				inFooter = false
			}
			b.WriteString(">")
		case html.TextToken:
			if !inFooter {
				b.Write(z.Text())
			}
		}
	}
}

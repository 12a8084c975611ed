package card

import "html/template"

func (c *Card) html() template.HTML { return "" }

// CSS is the style sheet for the classes [Card.HTML] uses. Serve it as a
// file or inline it under a hash-based content security policy.
const CSS = ``

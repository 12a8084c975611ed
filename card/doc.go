// Package card renders what an approver sees: a structured card built by
// trusted code from a canonical effect ([canon.Effect]) and trusted context
// ([Context]), with plain-text, HTML and JSON views, and the card hash that
// the approval challenge commits to.
//
// A passkey signs the challenge but does not display it, so what a person
// approves is whatever the card shows. The card is therefore built from the
// canonical effect only, never from a summary the agent wrote, and two
// effects with different digests never render to the same visible text.
//
// # Building a card
//
// [Render] takes the effect and a [Context]: the catalog's title, effect
// class and presentation [Hints], the policy's reasons, provenance, and the
// domains the integrator trusts. It fails closed, with [ErrBadEffect],
// [ErrBadContext] or [ErrUnrenderable], whenever something cannot be shown
// faithfully; no card means no approval. A [Card] is immutable.
//
// # Layout
//
// Every view shows, in this order: the tool and its effect class (external
// and irreversible stand out); every argument with its label and its own
// name, exactly once, whatever the hints say; the referenced content the
// approval binds, with SHA-256 and size; what it does not bind (references
// that could not be resolved); the context (principal, task, provenance);
// the agent's rationale and the tool server's description, in a region
// labelled as written by the agent; and a short fingerprint of the digest.
//
// # What is shown, exactly
//
// Strings are shown in quotes with an injective escaping: a backslash always
// starts an escape (\\, \", \n, \r, \t, \u{HEX}), so the display determines
// the string. Control characters, bidirectional controls, zero-width and
// other default-ignorable characters, spaces other than U+0020, private-use
// and unassigned code points are escaped and flagged. Text that is not in
// NFC shows its combining marks escaped, so NFC and NFD spellings (which
// hash differently) look different. In a word that mixes scripts, letters
// that imitate Latin ones are escaped ("p\u{0430}ypal"), as are words made
// only of such look-alikes. Leading and trailing spaces, compatibility
// characters and right-to-left text are flagged.
//
// Numbers are shown as canonicalized, never rounded or localized; the
// amount shows its currency when the catalog names it. A string longer than
// the display limit is shortened, and the card says so and shows the full
// value's size and SHA-256; the HTML view can expand it. Nothing is cut
// silently.
//
// # Domains
//
// Host names of e-mail addresses and URLs in any string, and of arguments
// the catalog declares as domains ([Hints].Domains), are converted with a
// strict IDNA2008 profile (golang.org/x/net/idna); a conversion error, or an
// invisible character in the name, refuses the card. The A-label (xn--)
// form is authoritative and the registrable domain (public suffix list) is
// emphasised. The Unicode form is shown only when each label is in one
// script, or Latin with the scripts of Chinese, Japanese or Korean;
// otherwise a warning names the scripts. A domain whose skeleton equals that
// of a trusted domain ([Context].Trusted) but which is a different domain
// is flagged as a look-alike ("exarnple.com", "p\u0430ypal.com").
//
// The skeletons use a compact confusables table: Cyrillic, Greek and
// Armenian letters drawn like Latin ones, and rn/m, vv/w, cl/d, 0/o, 1/l.
// It is a subset of the data of Unicode Technical Standard #39, chosen for
// the characters that matter on an approval card, not all of it.
//
// # Agent text
//
// [Context].Rationale and [Context].ToolDescription are untrusted. They
// appear only inside the region labelled as written by the agent, escaped
// in every view: in the text view each of their lines sits behind a bar, so
// no line can pass for a line of the card; in the HTML view they cannot
// open or close an element; in the JSON they sit under "untrusted".
//
// # Card hash
//
// [Card.Hash] is
//
//	SHA-256("asu/v1/card" ‖ 0x00 ‖ JCS(card JSON))
//
// where the card JSON is what [Card.JSON] returns and carries
// "renderer": "asu.card.v1", so a change to the rendering rules changes
// every hash. It is a function of the JSON bytes alone: a verifier holding
// a receipt recomputes it with any RFC 8785 implementation and SHA-256,
// without this package ([HashJSON] does the same here).
//
// # JSON format
//
// The card JSON ("asu.card.v1") is an object with the members renderer,
// digest (the effect digest, hex), tool (name, title, class), args,
// refs and unbound (references the approval binds and does not bind, each
// with its index in the effect), context (policy_version, reasons,
// provenance, task, step, user, agent, delegations, audience) and
// untrusted (rationale, tool_description). Every string in it is display
// text, already escaped as described above, as {"text": ..., "flags": [...]}.
// Each argument has a name, an optional label, role, unit and currency, and
// a value node: {"kind": "string"|"number"|"bool"|"null"|"object"|"array",
// "text": ..., "flags", "long" ({"bytes", "sha256", "full"} when shortened),
// "domains", "members" ({"key", "value"}) or "items"}. A native app shows
// these fields as the views here do and never renders raw argument values.
//
// # Views
//
// [Card.Text] is for terminals and logs; [Card.Visible] is the same without
// the fingerprint, what distinguishes one effect's card from another's.
// [Card.HTML] is a fragment to embed in an approval page styled by [CSS];
// the page around it sets the content security policy. [Card.JSON] is the
// model for native apps and receipts.
package card

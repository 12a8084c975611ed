// Package card renders what an approver sees: a structured card built by
// trusted code from a canonical effect ([canon.Effect]) and trusted context
// ([Context]), with plain-text, HTML and JSON views, and the card hash that
// the approval challenge commits to.
//
// A passkey signs the challenge but does not display it, so what a person
// approves is whatever the card shows. The card is therefore built from the
// canonical effect only, never from a summary the agent wrote, and two
// effects with different digests never render to cards that look the
// same.
//
// # Building a card
//
// [Render] (or [Renderer.Render]; the package function uses the default
// [Renderer]) takes the effect and a [Context]: the catalog's title,
// effect class and presentation [Hints], the policy's reasons, provenance,
// and the domains the integrator trusts. It fails closed, with
// [ErrBadEffect], [ErrBadContext] or [ErrUnrenderable], whenever something
// cannot be shown faithfully; no card means no approval.
// [RenderSealed] renders an effect already sealed ([canon.Seal]) from
// its parsed arguments, without canonicalizing it again: the same card.
// [Renderer.CheckContext] validates a context when a catalog is
// configured: it refuses a public suffix ("com", "github.io") as a trusted
// domain, which would trust every domain registered under it. A [Card] is
// immutable.
//
// # Layout
//
// Every view shows, in this order: what will run (the tool and its effect
// class, external and irreversible standing out, then every argument with
// its label and its own name, exactly once, whatever the hints say); the
// referenced content the approval binds, with SHA-256 and size, and what
// it does not bind; why a person is asked (the policy and its reasons);
// the context (principal, delegations, task, step when there is one,
// executor, provenance); the agent's rationale and the tool server's
// description, in a region labelled as written by the agent; and a short
// fingerprint of the digest. Hints change labels and order only. Every
// string that comes from the effect or the agent is quoted or boxed in
// every view, never run on after text of the card's own: the amount's
// currency reads 120 [currency "EUR"].
//
// # What is shown, exactly
//
// Every string, in every place (argument values and names, object keys,
// the tool name, task, step, user, agent, delegations, executor, reference
// names, kinds and reasons, and the agent's text), goes through one
// escaper, and what it finds is flagged where the string is shown, in
// every view. The escaping is injective: a backslash always starts an
// escape (\\, \", \n, \r, \t, \u{HEX} or \{N spaces}), so the display
// determines the string.
//
// Printable ASCII is shown as itself, except that a run of two or more
// spaces is shown counted (\{3 spaces}). What else is shown as itself
// depends on what the string is.
//
// Ordinary text (a string argument value, the catalog's title, labels
// and units, the policy's reasons and who may approve, provenance, the
// reason a reference is not bound, and the agent's text) reads as
// written, judged word by word as browsers judge an IDN label (UTS #39
// section 5): a word in one script, or in Latin with the scripts of
// Chinese, Japanese or Korean, is shown as itself with the punctuation of
// its language ("It’s done", "Total €1,200.00", "Zażółć gęślą jaźń",
// "Привет, мир", "3분기 보고서를 첨부합니다", "報告書を送信します。"). What
// could pass for something else is escaped and flagged: a word mixing
// scripts (every character outside ASCII of it), a word outside Latin
// every character of which has a twin in one other script (whole-script
// confusable: Cyrillic "сор", Greek "για", single letters such as "у"),
// small capitals and IPA letters, Han and kana strokes next to a Latin
// letter, and of each class of characters UTS #39 draws alike all but
// the one the place shows (ASCII where it stands, a Cyrillic letter in a
// Cyrillic word, a dash, which a hurried reader takes for a hyphen). A
// few characters UTS #39 lists with a look-alike are shown as themselves
// because the card's monospace font, or their readers, tell them apart:
// curly quotes (not the low single quote ‚, which the font draws as a
// comma), the bullet, ×, € wherever they stand; the punctuation of
// Arabic, Hebrew, Chinese and Japanese in text holding letters of that
// script; and Turkish ı, Greek σ and ς, Hebrew yod and final nun, Arabic
// yeh, æ and œ, Cyrillic б, the Thai consonants ค ด ต ม ฆ inside a word
// with another letter of their script (б among digits is escaped, as a 6
// would be read). Of kana drawn alike (へ and ヘ), the one of the word's
// own kana is shown; of marks drawn alike within a script (Hebrew holam
// and sin dot, Malayalam ു and ൂ), one, the prototype when it is a mark.
// A letter or digit drawn as a mark of its script (Tamil ன as ை, ஈ as
// ா, Telugu ౦ as the anusvara ం) is shown at the start of a word or
// carrying a mark, and escaped elsewhere in a word, where the mark
// could stand; a mark after such a mark is escaped.
// Only twins a living language writes count against a word (the scripts
// of UAX #31's Table 5, without their archaic, phonetic and notational
// letters), so "Итого", "Здравствуйте" and "Αθήνα" read as written while
// a look-alike holding archaic Ͷ or Cherokee Ᏼ is escaped; an ASCII
// digit in a word whose script has a letter drawn like it is escaped
// ("3дравствуйте"). Of twins that differ in case (θ and Θ), the one of
// its neighbours' case is shown, a capital at the head of a sentence. A
// capital drawn as I (Greek Ι, Cyrillic І) is the twin of I, so Ὶ and Ì,
// Ї and Ï are told apart; an ASCII | or 1 touching Hebrew or Arabic
// letters, or 0 touching Cyrillic or Greek ones, is escaped, as it
// would be read as ו, ا or О. Persian and Urdu peh پ is told from
// theh ث by its dots; in text holding a letter only Persian or Urdu
// writes (پ, چ, ژ, گ, ٹ, ڈ, ڑ) and no teh marbuta ة, their yeh ی and keheh
// ک are shown and the Arabic ى, ي and ك they are drawn as escaped, and
// elsewhere the other way round. Of a spacing mark drawn as ASCII and
// that ASCII, one is escaped in each place: an 8 or o after an Oriya,
// Telugu, Kannada, Malayalam or Sinhala letter (ଃ and the anusvara ం
// are how those words are written), a colon inside a Devanagari or
// Gujarati word ("दु:ख") and the visarga at a word's end ("नमः", where
// "नाम:" ends a label).
// Text that could pass for a trusted domain's name ("pаypal" when
// paypal.com is trusted) keeps the strict rule below.
//
// Identifiers and names (the tool name, object keys and argument names,
// task, step, user, agent, delegations, executor, policy version,
// reference names and kinds, currencies, and hosts) keep the strict
// rule: any other character is shown as itself only when a reader can see
// it and tell it from every other: it is
// not a control, format, bidirectional, default-ignorable, blank (U+2800,
// Hangul fillers), space, private-use or unassigned character; not a box
// drawing or block character (which the text view uses for its own lines);
// in NFC and NFKC on its own (so no full-width letter, ligature or
// canonical duplicate such as U+212A KELVIN SIGN); not a combining mark
// that could hide on its letter (generic marks, marks on a letter of
// another script, and Arabic's own marks, whose dots would put one
// letter's on another's skeleton, are escaped; a Devanagari vowel sign
// on a Devanagari letter is not); and no non-ASCII part of its canonical decomposition is
// listed in the confusables data of Unicode Technical Standard #39. In
// text that is not in NFC, whatever NFC would combine is escaped too, in
// both rules. Everything else is escaped ("p\u{0430}ypal") and flagged.
//
// Both rules are injective under look-alikes: two different strings
// never display alike once UTS #39 prototypes are folded, except for the
// characters told apart named above. (ASCII look-alikes such as I, l and
// 1, 0 and O, rn and m are left as they are: the card sets values in a
// monospace font, which draws them apart, and domains are compared by
// skeleton anyway.)
//
// The confusables data is the complete table of UTS #39 for Unicode
// 13.0.0, generated into card/internal/confusable; the per-character
// properties are generated from the Unicode 15.0.0 tables of the Go
// toolchain into card/internal/charclass, so rendering costs one table
// lookup per character. Words that mix scripts beyond UTS #39's highly
// restrictive level, right-to-left text (in ordinary text, only beside
// left-to-right letters or digits, whose order on screen the
// bidirectional algorithm changes),
// leading and trailing spaces and multi-line values are flagged. A line break in a value is shown as \n
// and ends a displayed line.
//
// Numbers are shown as canonicalized, never rounded or localized. A string
// longer than the display limit is shortened, and the card says so and
// shows the full value's size and SHA-256; the HTML view can expand it.
// Nothing is cut silently.
//
// # Domains
//
// Every string, and every key, is read as an e-mail address (RFC 5322 and
// RFC 5321, with RFC 6531's UTF-8: a dot-atom or quoted local part, or a
// display name and an address in angle brackets) and as a URL the way
// browsers read one (the WHATWG URL standard: tab and newline removed, a
// backslash is a slash in the special schemes, the host is what follows
// the last @ of the authority, percent-encoding in the host decoded). An
// argument the catalog declares as a domain ([Hints].Domains) is read as a
// host name with an optional port. A value gets a TRUSTED badge only when
// the whole value is exactly one address, URL or declared host, holds no
// white space or control character, names no other host anywhere, and its
// host is a trusted domain ([Context].Trusted) or under one. A value that
// names hosts but is not exactly one, or that names more than one, never
// gets the badge and says so; each host it names is listed (at most eight
// per value), the one it goes to first. Text before the host that holds an
// @ (user info, a quoted local part, a display name) is called out. An
// address written with RFC 5322's comments and white space after its @
// or around its domain's dots ("a@(example.com) evil.net", "a@evil .
// net"), which mail software reads as the domain they surround, lists
// that domain first; such a value is never badged.
//
// In the HTML view, text holding right-to-left letters has a
// left-to-right mark on each side of every number, so that no number
// joins a right-to-left run: two values whose words and numbers stand in
// other orders are never drawn alike ("ادفع 100 واسترد 200" and "200
// ادفع 100 واسترد" would be, by the bidirectional algorithm alone). Each
// run of right-to-left words is drawn as it reads; the runs, numbers and
// left-to-right words follow one another as written.
//
// A mailto: URI is read as RFC 6068 reads it: its recipients are the
// comma-separated addresses of its path and of every to, cc and bcc header
// field (the field names in any case, names and values percent-decoded),
// and the host of each is listed. Such a URI is exactly one host, and may
// get the badge, only when every recipient is at that one host; any other
// header field is decoded and searched for hosts like any text, so a host
// named there (in "reply-to", say, which some clients honour) also denies
// the badge. Only a URL whose scheme sends something to its host (http,
// https, ws, wss, ftp) may get the badge; a URL with any other scheme
// (javascript:, data:, file:, an application's own) has its host listed
// with a warning saying that the scheme sends nothing to it. A URL the
// WHATWG parser refuses (a port above 65535, say) is not a URL.
//
// Host names are converted with a strict IDNA2008 profile
// (golang.org/x/net/idna); a conversion error, or an invisible character
// in the name, refuses the card when the value is the address or URL, and
// is flagged when the name is only mentioned. The A-label (xn--) form is
// authoritative and the registrable domain (public suffix list) is
// emphasised. The Unicode form is shown only when each label is in one
// script, or Latin with the scripts of Chinese, Japanese or Korean, and has
// no look-alike character. A domain whose UTS #39 skeleton equals that of a
// trusted domain but which is a different domain is flagged as a
// look-alike ("exarnple.com", "p\u0430ypal.com"), and one that holds a
// trusted domain's name inside another registrable domain is flagged too.
//
// A card analyses at most 4,096 hosts (each distinct host once for each
// way a value uses it), which bounds the work an effect naming a great
// many distinct hosts costs. Past that, a value's hosts the card has not
// analysed already are not listed, converted or checked: its list of
// domains ends with an entry saying so, and none of them is marked
// trusted.
//
// # Agent text
//
// [Context].Rationale and [Context].ToolDescription are untrusted. They
// appear only inside the region labelled as written by the agent, escaped
// like every string except that line breaks stay line breaks: in the text
// view each of their lines sits behind a bar, so no line can pass for a
// line of the card; in the HTML view they cannot open or close an element;
// in the JSON they sit under "untrusted".
//
// # Text view and terminals
//
// [Card.TextWidth] wraps the text view at a stated width (at least
// [MinWidth]); [Card.Text] uses [DefaultWidth]. Every line the card writes
// starts with "▌", which no string from the effect or the agent can show
// (box drawing and block characters are always escaped), so in a terminal
// narrower than the card, where the terminal wraps long lines itself, the
// pieces it wraps start without the mark and cannot pass for lines of the
// card. A line the card wraps goes on after "┆", behind the same region
// prefix; "┆ " when it broke at a space (the space dropped), "┆" when it
// broke inside a word or after a \n, so joining the lines gives back the
// text exactly.
//
// # Card hash
//
// [Card.Hash] is
//
//	SHA-256("asu/v1/card" ‖ 0x00 ‖ JCS(card JSON))
//
// where the card JSON is what [Card.JSON] returns and carries "renderer":
// the renderer's ID ([RendererID], "asu.card/v4"), so a change to the
// rendering rules changes every hash. It is a function of the JSON bytes
// alone: a verifier holding a receipt recomputes it with any RFC 8785
// implementation and SHA-256, without this package ([HashJSON] does the
// same here).
//
// # JSON format
//
// The card JSON ("asu.card/v4") is an object with the members renderer,
// digest (the effect digest, hex), tool (name, title, class), args, refs
// and unbound (references the approval binds and does not bind, each with
// its index in the effect, kind, name and, when unbound, reason), context
// (policy_version, reasons, approvers: who may approve, provenance, task,
// step when the effect has one, user, agent, delegations, audience) and
// untrusted (rationale,
// tool_description). Every string in it is display text, already escaped
// as described above, as {"text": ..., "flags": [...]}. Each argument has
// a name (with name_domains when the name holds a host), an optional
// label, role, unit and currency, and a value node: {"kind":
// "string"|"number"|"bool"|"null"|"object"|"array", "text": ..., "flags",
// "long" ({"bytes", "sha256", "full"} when shortened), "domains",
// "members" ({"key", "key_domains", "value"}) or "items"}. A domain is
// {"written", "ascii", "registrable", "unicode", "scripts", "trusted",
// "looks_like", "warnings"}. A native app shows these fields as the views
// here do and never renders raw argument values.
//
// # Views
//
// [Card.Summary] (and [Card.SummaryHTML], [Card.SummaryText]) is the
// card's own summary for the place right above an approval page's
// buttons: the recipient's registrable domains and whether each is
// trusted, the amount and its currency, and how many warnings the card
// carries. On a phone-width screen [CSS] never breaks an address, URL or
// id (a string value without a space) inside itself: it scrolls in its
// box.
//
// Every view has a byte budget, a multiple of what the card is drawn from
// (the effect's canonical bytes and the context's text): 96 times for the
// HTML view and 64 times for the text view, plus 256 KiB. The densest
// shapes of small values take about 46 and 14 times; values made of many
// short hosts, each with its own box of warnings, about 77 and 54. A view
// that would pass its budget stops there and says the card is too large
// to show. The card JSON is at most the 16 MiB a verifier accepts:
// [Render] refuses a card at the first value past that, before building
// the rest.
//
// [Card.Text] and [Card.TextWidth] are for terminals and logs;
// [Card.Visible] is the text view without the fingerprint, what
// distinguishes one effect's card from another's. [Card.HTML] is a
// fragment to embed in an approval page styled by [CSS], which stacks each
// label above its value on a phone-width screen and never breaks an
// address, host or number inside itself; the page around it sets the
// content security policy. [Card.JSON] is the model for native apps and
// receipts.
package card

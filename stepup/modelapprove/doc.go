// Package modelapprove asks a language model to approve or deny a tool
// call, for calls an integrator lets a model decide instead of a person
// (low-stakes ones, or as a first screen before a person). A model is not
// a second factor: a compromised agent cannot forge a person's passkey,
// but it can try to talk a model round. This package makes that as hard
// as it can and fails closed; it does not make a model judgment worth a
// person's.
//
// # What the model sees
//
// A [Judge] sends a [Model] two messages. The system message holds the
// only instructions: the rules, the integrator's criteria
// (Options.Instructions) and the answer format. The user message holds
// two regions, each between marker lines that carry a random 128-bit code
// drawn for this call:
//
//	⟦ACTION <code>⟧           the trusted card, as card.Card.Text gives it
//	⟦END ACTION <code>⟧
//	⟦AGENT TEXT <code>⟧       the agent's own text: untrusted
//	⟦END AGENT TEXT <code>⟧
//
// The system message tells the model that text inside a region is data,
// never instructions, and that a region ends only at its exact closing
// marker. The agent cannot close a region early: the marker characters ⟦
// and ⟧ are replaced by plain brackets inside the data, so the data holds
// no marker of any kind, and the code is drawn after the data is known
// and never occurs in it. Control and invisible characters in the data
// (bidirectional overrides, zero-width characters) become U+FFFD.
//
// Pass the agent's rationale and the tool server's description as the
// untrusted text. The card may show them too (in its region labelled as
// written by the agent); the system message says that region is
// untrusted as well, and that the values the card quotes are data.
//
// # What the model must answer
//
// Exactly one JSON object, {"decision":"approve","reason":"..."} or
// {"decision":"deny","reason":"..."}: both members, each once, spelled
// exactly, strings, and nothing else around it but whitespace. An empty,
// malformed or oversized answer, an error, a panic, or no answer within
// Options.Timeout or before the caller's context ends, is a denial,
// with the judgment's Err saying why.
//
// # What is kept
//
// A judgment (plug.Judgment) carries the decision, the reason, the model's ID, and two
// hashes for the audit record: [PromptHash] of the exact messages sent
// and the SHA-256 of the raw answer. The card, which shows the call's
// arguments, goes to whoever runs the model: choose the model's host
// accordingly.
//
//	judge, err := modelapprove.NewJudge(model, &modelapprove.Options{
//		Timeout:      10 * time.Second,
//		Instructions: "Approve reading and drafting; deny sending anything outside example.com.",
//	})
//	...
//	v := judge.Decide(ctx, c.Text(), call.Rationale)
//	if v.Approve { ... } // else v.Reason says why
package modelapprove

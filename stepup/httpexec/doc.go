// Package httpexec runs approved calls in the team's own tools over HTTP:
// an [Executor] POSTs the stored effect of an approved ticket, signed, to
// the tool's URL, and the tool checks with [Verify] (or two dozen lines
// of Python, below) that the request came from the gate, for that tool
// and exactly that effect, before it acts.
//
//	exec, err := httpexec.New("issue_refund", "https://refunds.internal/asu", secret, &httpexec.Options{Timeout: 10 * time.Second, Retries: 2})
//	g, err := gate.New(st, catalog, approver, gate.WithExecutor("issue_refund", exec))
//
// # What is sent
//
// One POST per attempt, with the body
//
//	{"digest":"<hex SHA-256 of effect>","effect":<the canonical effect>,"idempotency_key":"<key>","ticket":"<ticket id or empty>"}
//
// written in exactly that form (members in that order, no spaces), where
// effect is the effect exactly as the approver's passkey signed it
// (canon's RFC 8785 form: tool, canonical arguments, resolved references
// with their content hashes, task, principal, policy version), and these
// headers:
//
//	Content-Type:    application/json
//	Asu-Tool:        <the tool's catalog name>
//	Idempotency-Key: <the key>
//	Asu-Signature:   t=<unix seconds>,v1=<hex HMAC-SHA256(secret, canonical string)>
//
// The canonical string is five lines joined by "\n", with no trailing
// newline:
//
//	asu/v1/exec
//	<t, as in the header>
//	<Asu-Tool>
//	<Idempotency-Key>
//	<hex SHA-256 of the exact body bytes>
//
// The secret (at least 32 bytes) is the tool's own, or one the service
// shares with all its tools; a per-tool secret keeps a tool that leaks
// its secret from forging requests to the others. Under a shared secret a
// request signed for one tool carries a valid signature at every tool,
// so the verifier is told the tool it guards and refuses a request whose
// Asu-Tool is another ([ErrWrongTool]). The signature covers no URL: a
// proxy may rewrite the path, and the tool name is what names the
// effect. Each attempt is signed
// afresh with the time it is sent. A verifier accepts up to eight v1
// items and ignores keys it does not know, so the gate can roll a secret
// (sign with both) or add a scheme later.
//
// # The idempotency key
//
// The key is a function of the approval: every attempt, every retry and
// every re-run after a crash, on any gate replica, carries the same key.
// A key the tool has seen before means "the same effect again, do not
// repeat it": the tool records the key with the effect's outcome, in the
// same transaction as the effect where it can, and answers a repeat with
// the recorded outcome. That is what makes retries safe: the gate retries
// an attempt that got no answer, because it cannot tell a request lost on
// the way from an answer lost on the way back.
//
// # Timeouts, retries and answers
//
// Each attempt has a timeout ([Options].Timeout). No answer, a 5xx or a
// 429 is retried ([Options].Retries times, after an exponential backoff
// that ends early when the context does). Any other non-2xx answer is
// final: [ErrToolFailed]. A 2xx answer's body (at most
// [Options].MaxResponseBytes, else [ErrResponseTooLarge]) is the
// ticket's output; JSON is kept as JSON.
//
// A failed execution is final for the gate: the ticket is recorded
// failed and never runs again. A tool that timed out may still have
// acted; what it recorded under the idempotency key is then the truth,
// and an operator reconciles with it.
//
// # Receiving, in Go
//
// Each handler names the tool it runs: under a secret shared by several
// tools, that name is all that keeps a request signed for one of them
// from running at another.
//
//	func serveRefund(w http.ResponseWriter, r *http.Request) {
//		req, err := httpexec.Verify(r, "issue_refund", secret, httpexec.DefaultWindow, time.Now())
//		if err != nil {
//			http.Error(w, "refused", http.StatusUnauthorized)
//			return
//		}
//		// req.Effect.Args are the approved arguments; dedupe on req.IdempotencyKey.
//	}
//
// # Receiving, in Python
//
//	import hashlib, hmac, json, time
//
//	def verify(headers, body: bytes, secret: bytes, tool: str, window=300):
//	    """The effect message of a request the asu gate signed for tool (the one this handler runs), or ValueError."""
//	    items = [i.strip().partition("=") for i in headers.get("Asu-Signature", "").split(",")]
//	    ts = [v for k, _, v in items if k == "t"]
//	    sigs = [v.lower() for k, _, v in items if k == "v1" and v.isascii()]
//	    if len(ts) != 1 or not (ts[0].isascii() and ts[0].isdigit() and len(ts[0]) <= 12) or abs(time.time() - int(ts[0])) > window:
//	        raise ValueError("timestamp missing or outside the window")
//	    signed_tool, key = headers.get("Asu-Tool", ""), headers.get("Idempotency-Key", "")
//	    canonical = "\n".join(["asu/v1/exec", ts[0], signed_tool, key, hashlib.sha256(body).hexdigest()])
//	    want = hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()
//	    if not any([hmac.compare_digest(want, s) for s in sigs]):
//	        raise ValueError("bad signature")
//	    if signed_tool != tool:
//	        raise ValueError("the request is for another tool")
//	    msg = json.loads(body)
//	    effect = msg.get("effect") if isinstance(msg, dict) else None
//	    if not isinstance(effect, dict) or effect.get("tool") != tool or msg.get("idempotency_key") != key:
//	        raise ValueError("headers disagree with the body")
//	    if hashlib.sha256(body[body.index(b'"effect":') + 9:body.rindex(b',"idempotency_key"')]).hexdigest() != msg.get("digest"):
//	        raise ValueError("the effect does not hash to its digest")
//	    return msg  # msg["effect"]["args"] are the approved arguments; keep msg["idempotency_key"]
//
// The package's tests run this very text against requests an Executor
// signed.
//
// # This package or exectoken
//
// Pick httpexec when the tool is a service of its own that shares
// nothing with the gate but a secret: the gate decides, spends the
// approval and calls the tool; the tool trusts the gate's signature and
// keeps the idempotency keys. The tool never touches the gate's store,
// and a tool in any language verifies in two dozen lines.
//
// Pick package exectoken when the tool's service must itself decide
// whether the approval still stands right before it acts, or holds
// credentials the gate must never be able to use on its own: the
// runtime carries a short-lived execution token to the tool's service,
// which shares the gate's store, re-checks the ticket and spends it
// itself. It costs a Go service on the gate's store.
package httpexec

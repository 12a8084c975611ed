// Package notify tells approvers that a ticket waits for a person. The
// gate calls a [Notifier] after it parks a ticket; what the Notifier sends
// is a [Notice]: the ticket id, the tool, its effect class, the user the
// call acts for, who may decide, the expiry, and a link to the approval
// site. Never the challenge or the arguments: the person reads the card on
// the approval site, on their own device, and answers there with their
// passkey. A notification is a pointer, not a channel to approve through.
//
// Notifying never decides anything. A Notifier that fails, or is slow,
// leaves the ticket pending and visible in the approvers' queue; the
// gate logs the error and goes on.
//
// # Webhook
//
// [Webhook] POSTs each Notice as JSON to one URL. [Webhook.Notify] only
// validates and enqueues, and returns at once: when the bounded queue is
// full the Notice is dropped and counted ([Webhook.Stats]). Workers deliver
// in the background, each try bounded by a timeout; network errors, 429
// and 5xx answers are retried a bounded number of times with exponential
// backoff; any other answer ends the delivery. [Webhook.Close] stops the
// workers.
//
//	hook, err := notify.NewWebhook("https://chat.example.com/hooks/asu", secret, nil)
//	...
//	defer hook.Close(ctx)
//	err = hook.Notify(ctx, notify.Notice{Ticket: id, Tool: "send_email", ...})
//
// # What is sent
//
// The body is the Notice's JSON object with one more member, "delivery",
// the delivery id (32 lowercase hex digits, random, the same for every
// try of one Notice):
//
//	{"delivery":"9f2c…","ticket":"t_…","tool":"send_email","class":"external",
//	 "user":"user:lee","approvers":["user:lee"],
//	 "expires_at":"2026-05-01T10:15:00Z","link":"https://approve.example.com/t/t_…"}
//
// with these headers:
//
//	Content-Type:  application/json
//	Asu-Delivery:  <the delivery id>
//	Asu-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// The signature is the HMAC-SHA256, under the shared secret (at least 32
// bytes), of the decimal timestamp, a full stop, and the exact body bytes;
// written as 64 hex digits. Each try is signed afresh with the time it is
// sent. A receiver must accept more than one v1 item and ignore keys it
// does not know, so the sender can roll a secret (sign with both) or add a
// scheme later. The delivery id is inside the signed body, so a replay
// guard keyed on it cannot be dodged by editing a header.
//
// # Receiving
//
// [Verify] checks a request: one signature header, a timestamp within the
// window of now (either way), a body of at most [MaxBodyBytes], an HMAC
// that matches (compared in constant time), a valid Notice, and at most
// one Asu-Delivery header, the body's id when present. A
// [ReplayGuard] also refuses a delivery id it has seen within the window,
// holding a bounded number of ids:
//
//	guard := notify.NewReplayGuard(10000)
//	http.HandleFunc("/hooks/asu", func(w http.ResponseWriter, r *http.Request) {
//		d, err := guard.Verify(r, secret, 5*time.Minute, time.Now())
//		switch {
//		case errors.Is(err, notify.ErrReplayed):
//			w.WriteHeader(http.StatusOK) // already have it; stop retrying
//		case errors.Is(err, notify.ErrGuardFull):
//			w.WriteHeader(http.StatusServiceUnavailable) // retried later
//		case err != nil:
//			w.WriteHeader(http.StatusUnauthorized)
//		default:
//			post(d.Notice.Link) // tell the approvers where to decide
//		}
//	})
//
// A receiver in another language does the same: parse the header, check
// |now - t| within the window, recompute the HMAC over "<t>.<body>" and
// compare in constant time, then decode the body.
package notify

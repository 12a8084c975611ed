// The approver's inbox: sign in with a passkey, then watch the queue of
// requests this approver may decide, live. Approving or denying a
// request signs that request's own challenge with the passkey and posts
// it to the request's page on the approval site; the session only lists.
"use strict";

(function () {
  var root = document.getElementById("inbox");
  var list = document.getElementById("inbox-list");
  if (!root || !list) { return; }
  var prefix = root.dataset.prefix;
  var approvePath = root.dataset.approve;
  // How long an approve button waits after its card is shown comes from
  // the gate's answer to each showing; data-dwell is only what the page
  // holds when that answer does not come (the gate judges anyway).
  var fallbackDwell = parseInt(root.dataset.dwell, 10) || 0;
  var body = document.body;

  var items = new Map(); // ticket id -> {el, entry, left, status, reason, busy, readyAt, shown}
  var user = "";         // who is signed in: the state below is theirs
  var offset = 0;        // the server's clock minus this browser's, in ms
  var sessionEnds = 0;   // ms since the epoch, on the server's clock
  var stream = null;
  var retry = null;
  var first = true;

  function $(id) { return document.getElementById(id); }

  function toBytes(s) {
    var b64 = s.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) { b64 += "="; }
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out.buffer;
  }

  function toB64(buf) {
    var bytes = new Uint8Array(buf);
    var bin = "";
    for (var i = 0; i < bytes.length; i++) { bin += String.fromCharCode(bytes[i]); }
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function requestOptions(options) {
    var o = JSON.parse(JSON.stringify(options));
    o.challenge = toBytes(o.challenge);
    (o.allowCredentials || []).forEach(function (c) { c.id = toBytes(c.id); });
    return o;
  }

  function credentialJSON(cred) {
    var r = cred.response;
    var resp = {
      clientDataJSON: toB64(r.clientDataJSON),
      authenticatorData: toB64(r.authenticatorData),
      signature: toB64(r.signature)
    };
    if (r.userHandle) { resp.userHandle = toB64(r.userHandle); }
    return {
      id: cred.id,
      rawId: toB64(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: resp
    };
  }

  function call(method, url, payload) {
    var init = { method: method, credentials: "same-origin", headers: {} };
    if (method === "POST") {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload === undefined ? {} : payload);
    }
    return fetch(url, init).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (j) {
        if (!resp.ok) {
          var e = (j && j.error) || {};
          var err = new Error(e.message || e.code || ("HTTP " + resp.status));
          err.status = resp.status;
          err.code = e.code;
          throw err;
        }
        return j;
      });
    });
  }

  function say(text, kind) {
    var el = $("inbox-status");
    el.textContent = text || "";
    el.className = "inbox-status " + (kind || "");
  }

  function live(text, kind) {
    var el = $("inbox-live");
    el.textContent = text;
    el.className = "inbox-live " + (kind || "");
  }

  function show(state) {
    body.dataset.inbox = state;
    $("inbox-signin").hidden = state !== "signin";
    $("inbox-queue").hidden = state !== "queue";
    $("inbox-signout").hidden = state !== "queue";
    if (state !== "queue") { reset(); }
  }

  // reset clears everything the page shows of a session, in one place:
  // called whenever the session changes (signed out, ended, another
  // approver signed in), so nothing of one approver stays on screen for
  // the next.
  function reset() {
    items.forEach(function (it, id) { drop(it, id, true); });
    items.clear();
    list.textContent = "";
    user = "";
    first = true;
    $("inbox-who").textContent = "";
    $("inbox-count").textContent = "";
    var f = $("inbox-figures");
    f.textContent = "";
    f.hidden = true;
    $("inbox-empty").hidden = true;
    live("");
    body.dataset.count = "0";
    delete body.dataset.decided;
    document.title = "Approvals inbox";
  }

  // --- the session ---------------------------------------------------------

  // figures shows the approver their own recent decisions in the header,
  // and says so plainly when they look like rubber-stamping.
  function figures(f) {
    var el = $("inbox-figures");
    if (!f || (f.approved + f.denied) === 0) {
      el.hidden = true;
      return;
    }
    var secs = Math.round(f.median_decision_ms / 100) / 10;
    el.textContent = "Recently: " + f.approved + " approved, " + f.denied + " denied (" +
      Math.round(f.approval_rate * 100) + "% approved), median " + secs + " s to decide" +
      (f.rubber_stamp ? ". You approve almost everything within seconds: slow down and read each card." : ".");
    el.className = f.rubber_stamp ? "inbox-figures inbox-warn" : "inbox-figures";
    el.hidden = false;
  }

  function start() {
    retry = null;
    call("GET", prefix + "/session").then(function (s) {
      if (s.user !== user) { reset(); }
      user = s.user;
      offset = Date.parse(s.now) - Date.now();
      sessionEnds = Date.parse(s.expires_at);
      $("inbox-who").textContent = s.user;
      figures(s.figures);
      show("queue");
      connect();
    }).catch(function (e) {
      if (e.status === 401) {
        show("signin");
        return;
      }
      say(e.message, "bad");
      later(start);
    });
  }

  function later(fn) {
    if (!retry) { retry = setTimeout(fn, 5000); }
  }

  function signIn() {
    var button = $("inbox-signin-button");
    button.disabled = true;
    say("Waiting for your passkey…");
    call("POST", prefix + "/signin/begin").then(function (b) {
      return navigator.credentials.get({ publicKey: requestOptions(b.options) }).then(function (cred) {
        return call("POST", prefix + "/signin", { state: b.state, credential: credentialJSON(cred) });
      });
    }).then(function () {
      say("");
      button.disabled = false;
      start();
    }).catch(function (e) {
      say("Not signed in: " + e.message, "bad");
      button.disabled = false;
    });
  }

  function signOut() {
    disconnect();
    call("POST", prefix + "/signout").then(function () {
      show("signin");
      say("Signed out.");
    }, function (e) {
      // Not signed out everywhere: nothing of the session stays on
      // screen, and the button stays, to sign out again.
      reset();
      say("Not signed out: " + e.message, "bad");
    });
  }

  // --- the stream ------------------------------------------------------------

  function connect() {
    disconnect();
    stream = new EventSource(prefix + "/events");
    stream.addEventListener("open", function () { live("Live", "ok"); });
    stream.addEventListener("queue", function (ev) {
      var q = JSON.parse(ev.data);
      if (q.user !== user) { return; } // a stream of another session than the page's
      offset = Date.parse(q.now) - Date.now();
      sessionEnds = Date.parse(q.session_expires_at);
      render(q.entries || []);
      live("Live", "ok");
      say("");
    });
    stream.addEventListener("end", function () {
      disconnect();
      show("signin");
      say("Your session ended. Sign in again to see your requests.");
    });
    stream.addEventListener("error", function () {
      live("Reconnecting…", "warn");
      if (stream && stream.readyState === EventSource.CLOSED) {
        // Refused (signed out, or too many windows): ask the session why.
        disconnect();
        later(start);
      }
    });
  }

  function disconnect() {
    if (stream) { stream.close(); stream = null; }
  }

  // --- the list ----------------------------------------------------------------

  function render(entries) {
    var keep = new Set(entries.map(function (e) { return e.id; }));
    var focused = document.activeElement && document.activeElement.closest ?
      document.activeElement.closest(".inbox-item") : null;
    var refocus = null;
    items.forEach(function (it, id) {
      if (keep.has(id)) { return; }
      if (it.el.dataset.decided || it.busy) {
        // Decided here, or being decided here (the list can say so before
        // this page's own answer comes back): leave it in view, and the
        // confirmation a moment once it is shown.
        it.gone = true;
        if (it.el.dataset.decided) { linger(it, id); }
        return;
      }
      if (focused === it.el) {
        refocus = it.el.nextElementSibling || it.el.previousElementSibling;
      }
      drop(it, id);
    });
    var prev = null;
    entries.forEach(function (e) {
      var it = items.get(e.id);
      if (!it) {
        it = build(e);
        items.set(e.id, it);
        if (!first) { it.el.classList.add("inbox-new"); }
      } else {
        progress(it, e);
      }
      var want = prev ? prev.nextElementSibling : list.firstElementChild;
      if (it.el !== want) { list.insertBefore(it.el, want); }
      prev = it.el;
    });
    first = false;
    if (refocus && items.has(refocus.dataset.id)) { refocus.focus(); }
    counted(entries.length);
    if (!list.querySelector(".inbox-item.inbox-expanded")) {
      var top = list.querySelector(".inbox-item:not(.inbox-done)");
      if (top) { expand(items.get(top.dataset.id)); }
    }
    tick();
  }

  // counted shows how many requests wait, in the header and the tab's
  // title; "Nothing to decide" only once no request is on screen at all.
  function counted(n) {
    $("inbox-count").textContent = n ? n + " to decide" : "";
    $("inbox-empty").hidden = n > 0 || list.children.length > 0;
    body.dataset.count = String(n);
    document.title = (n ? "(" + n + ") " : "") + "Approvals inbox";
  }

  // linger drops it, gone from the list, once what it says has been in
  // view a moment.
  function linger(it, id) {
    if (!it.leaving) { it.leaving = setTimeout(function () { drop(it, id); }, 4000); }
  }

  function drop(it, id, quiet) {
    if (it.leaving) { clearTimeout(it.leaving); }
    if (items.get(id) === it) { items.delete(id); }
    it.el.remove();
    if (!quiet && body.dataset.inbox === "queue") {
      $("inbox-empty").hidden = body.dataset.count !== "0" || list.children.length > 0;
    }
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // progress shows where a ticket stands with its approvers: on its line
  // (1/2) and, opened, in words.
  function progress(it, e) {
    it.entry.progress = e.progress;
    it.entry.others = e.others;
    var p = e.progress || {};
    var needed = p.needed || 1;
    it.tally.textContent = needed > 1 ? (p.signed || []).length + "/" + needed + " approved" : "";
    it.tally.hidden = needed <= 1;
    it.others.textContent = p.sentence && needed > 1 ? p.sentence + "." :
      (e.others && e.others.length ? "Also may decide: " + e.others.join(", ") : "Only you may decide this.");
  }

  function build(e) {
    var li = el("li", "inbox-item");
    li.tabIndex = 0;
    li.dataset.id = e.id;
    var line = el("div", "inbox-line");
    var title = el("strong", "inbox-tool", e.tool);
    title.id = "inbox-t-" + e.id;
    li.setAttribute("aria-labelledby", title.id);
    var line1 = e.line || {};
    var key = el("span", "inbox-key", line1.key || "");
    var cls = el("span", "inbox-class inbox-class-" + (line1["class"] || "none"), line1["class"] || "");
    var tally = el("span", "inbox-tally");
    var left = el("span", "inbox-left");
    line.append(title, key, cls, tally, left);
    if (line1.warnings) { line.append(el("span", "inbox-warnings", "⚠ " + line1.warnings)); }
    li.append(line);

    var more = el("div", "inbox-body");
    more.hidden = true;
    var meta = e.agent + " for " + e.user + (e.group ? " · routed to " + e.group : "");
    more.append(el("p", "inbox-meta", meta));
    var others = el("p", "inbox-others");
    more.append(others);

    var card = el("div", "inbox-card");
    // The card's HTML is the gate's, rendered from the stored effect with
    // every value escaped by package card; the page's CSP forbids script.
    card.innerHTML = e.card;
    more.append(card);

    var label = el("label", "inbox-reason-label", "Reason for a denial (the agent is shown it)");
    var reason = el("input", "inbox-reason");
    reason.type = "text";
    reason.maxLength = 280;
    reason.autocomplete = "off";
    label.append(reason);
    more.append(label);

    var actions = el("div", "inbox-actions");
    var approve = el("button", "inbox-approve", "Read the card…");
    approve.type = "button";
    approve.disabled = true;
    var deny = el("button", "inbox-deny", "Deny with passkey");
    deny.type = "button";
    var open = el("a", "inbox-open", "Open page");
    open.href = e.link;
    open.target = "_blank";
    open.rel = "noopener";
    actions.append(approve, deny, open);
    more.append(actions);
    var status = el("p", "inbox-item-status");
    status.setAttribute("role", "status");
    more.append(status);
    li.append(more);

    var it = { el: li, entry: e, left: left, status: status, reason: reason, approve: approve, busy: false,
      readyAt: Infinity, shown: false, more: more, tally: tally, others: others };
    progress(it, e);
    li.addEventListener("focusin", function () { expand(it); });
    li.addEventListener("click", function () { expand(it); });
    approve.addEventListener("click", function (ev) { ev.stopPropagation(); decide(it, "approve"); });
    deny.addEventListener("click", function (ev) { ev.stopPropagation(); decide(it, "deny"); });
    return it;
  }

  // expand opens one request (its card, who approved, the buttons) and
  // closes the others; its card is then on screen, so the gate is told.
  function expand(it) {
    if (!it || it.el.classList.contains("inbox-expanded")) { return; }
    items.forEach(function (o) {
      if (o !== it && o.el.classList.contains("inbox-expanded")) {
        o.el.classList.remove("inbox-expanded");
        o.more.hidden = true;
      }
    });
    it.el.classList.add("inbox-expanded");
    it.more.hidden = false;
    if (!it.shown) { shown(it); }
  }

  function collapse(it) {
    if (!it) { return; }
    it.el.classList.remove("inbox-expanded");
    it.more.hidden = true;
  }

  // shown tells the gate the card is on this approver's screen, and holds
  // the approve button as long as the gate answers (its dwell, counted by
  // the gate from the first showing, which is never later than this
  // one); it is told again after a refusal as too fast (another approver
  // of a ticket that needs several approved in between).
  function shown(it) {
    it.shown = true;
    it.readyAt = Infinity;
    reading(it);
    call("POST", approvePath + encodeURIComponent(it.entry.id) + "/shown", {}).then(function (a) {
      it.readyAt = Date.now() + Math.max(0, (a && a.acceptable_in_ms) || 0);
    }).catch(function () {
      it.readyAt = Date.now() + fallbackDwell;
    }).then(function () {
      reading(it);
      var wait = it.readyAt - Date.now();
      if (wait > 0) { setTimeout(tick, wait + 20); }
    });
  }

  function itemSay(it, text, kind) {
    it.status.textContent = text;
    it.status.className = "inbox-item-status " + (kind || "");
  }

  function buttons(it, on) {
    it.el.querySelectorAll("button").forEach(function (b) { b.disabled = !on; });
    reading(it);
  }

  // reading holds the approve button while the card is new: the gate
  // refuses an approval sooner than its dwell time after the card was
  // first shown, and the page spares the approver that refusal.
  function reading(it) {
    var wait = it.readyAt - Date.now();
    if (wait > 0) {
      it.approve.disabled = true;
      it.approve.textContent = wait === Infinity ? "Read the card…" : "Read the card… " + Math.ceil(wait / 1000);
      return true;
    }
    if (it.approve.textContent !== "Approve with passkey") {
      it.approve.textContent = "Approve with passkey";
      it.approve.disabled = it.busy || !!it.el.dataset.decided;
    }
    return false;
  }

  // decide signs the ticket's own challenge (or its deny challenge) and
  // posts it to the ticket's page on the approval site.
  function decide(it, kind) {
    if (!it || it.busy || it.el.dataset.decided) { return; }
    expand(it);
    if (kind === "approve" && reading(it)) {
      itemSay(it, "Read the card first: you can approve in a moment.");
      return;
    }
    it.busy = true;
    buttons(it, false);
    itemSay(it, "Waiting for your passkey…");
    var e = it.entry;
    navigator.credentials.get({ publicKey: requestOptions(kind === "approve" ? e.approve : e.deny) }).then(function (cred) {
      var c = credentialJSON(cred);
      if (kind === "approve") {
        return call("POST", approvePath + encodeURIComponent(e.id), c);
      }
      return call("POST", approvePath + encodeURIComponent(e.id) + "/deny", { credential: c, reason: it.reason.value });
    }).then(function (t) {
      it.el.dataset.decided = t.status;
      it.el.classList.add("inbox-done");
      body.dataset.decided = e.id + " " + t.status;
      // Worded by the site from the ticket's status after the request:
      // the first of two approvals is told the action cannot run yet.
      itemSay(it, t.message || (kind === "approve" ? "Approved." : "Denied. The agent is told so."),
        t.status === "pending" ? "" : "ok");
      if (it.gone) { linger(it, e.id); }
    }).catch(function (err) {
      it.busy = false;
      if (err.code === "too_fast") { shown(it); }
      buttons(it, !it.gone);
      itemSay(it, (kind === "approve" ? "Not approved: " : "Not denied: ") + err.message, "bad");
      if (it.gone) { linger(it, e.id); }
    });
  }

  // --- time -------------------------------------------------------------------

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function left(ms) {
    if (ms <= 0) { return "expired"; }
    var s = Math.floor(ms / 1000);
    if (s < 600) { return Math.floor(s / 60) + ":" + pad(s % 60) + " left"; }
    if (s < 3600) { return Math.floor(s / 60) + " min left"; }
    return Math.floor(s / 3600) + " h " + pad(Math.floor(s % 3600 / 60)) + " min left";
  }

  function tick() {
    var now = Date.now() + offset;
    items.forEach(function (it) {
      var ms = Date.parse(it.entry.expires_at) - now;
      it.left.textContent = left(ms);
      it.el.classList.toggle("inbox-urgent", ms < 60000);
      reading(it);
    });
    if (body.dataset.inbox === "queue" && sessionEnds) {
      $("inbox-signout").title = "Session " + left(sessionEnds - now);
    }
  }

  // --- keys ---------------------------------------------------------------------

  function move(all, i) {
    if (!all.length) { return; }
    all[Math.max(0, Math.min(all.length - 1, i))].focus();
  }

  document.addEventListener("keydown", function (ev) {
    if (body.dataset.inbox !== "queue" || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) {
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    var all = Array.prototype.slice.call(list.children);
    var cur = t && t.closest ? t.closest(".inbox-item") : null;
    var i = cur ? all.indexOf(cur) : -1;
    var it = cur ? items.get(cur.dataset.id) : null;
    switch (ev.key) {
    case "j": case "ArrowDown": move(all, i + 1); break;
    case "k": case "ArrowUp": move(all, i < 0 ? 0 : i - 1); break;
    case "a": decide(it, "approve"); break;
    case "d": decide(it, "deny"); break;
    case "o": if (it) { window.open(it.entry.link, "_blank", "noopener"); } break;
    case "Enter":
      if (!it || t !== cur) { return; } // Enter on a button presses it
      if (cur.classList.contains("inbox-expanded")) { collapse(it); } else { expand(it); }
      break;
    default: return;
    }
    ev.preventDefault();
  });

  // --- go ---------------------------------------------------------------------

  if (window.location.origin !== root.dataset.origin) {
    body.dataset.inbox = "misdirected";
    say("Passkeys for this site work only at " + root.dataset.origin + ". Open " + root.dataset.origin +
      window.location.pathname + " instead.", "bad");
    return;
  }
  $("inbox-signin-button").addEventListener("click", signIn);
  $("inbox-signout").addEventListener("click", signOut);
  setInterval(tick, 1000);
  start();
})();

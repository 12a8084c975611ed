// The approval page: sign this ticket's challenge (approve) or the
// distinct deny challenge (deny) with the approver's passkey. On an
// approved ticket's page, sign the deny challenge to revoke the approval.
"use strict";

(function () {
  var box = document.getElementById("asu-decide") || document.getElementById("asu-revoke");
  if (!box) { return; }
  var ticket = box.dataset.ticket;

  function requestOptions(json) {
    var o = JSON.parse(json);
    o.challenge = asu.toBytes(o.challenge);
    (o.allowCredentials || []).forEach(function (c) { c.id = asu.toBytes(c.id); });
    return o;
  }

  function buttons(on) {
    box.querySelectorAll("button").forEach(function (b) { b.disabled = !on; });
  }

  function sign(optionsJSON) {
    return navigator.credentials.get({ publicKey: requestOptions(optionsJSON) });
  }

  if (!asu.onOrigin(box)) { buttons(false); return; }

  if (box.id === "asu-revoke") {
    document.getElementById("asu-revoke-button").addEventListener("click", function () {
      buttons(false);
      asu.say("Waiting for your passkey…");
      sign(box.dataset.revoke).then(function (cred) {
        return asu.post("/approve/" + encodeURIComponent(ticket) + "/revoke", {
          credential: asu.credentialJSON(cred),
          reason: document.getElementById("asu-reason").value
        });
      }).then(function (t) {
        asu.say("Revoked. The approval will never run.", "ok");
        document.body.dataset.decided = t.status;
      }).catch(function (e) {
        asu.say("Not revoked: " + e.message, "bad");
        buttons(true);
      });
    });
    return;
  }

  // The card is on screen: tell the gate, which starts the dwell time
  // before an approval counts from this moment (a link preview fetches the
  // page but runs no script, so it starts nothing). The page's view token
  // says the signal comes from this page. The gate answers how long until
  // an approval from this screen is acceptable; the approve button is held
  // that long from the answer's arrival, so it never enables sooner than
  // the gate accepts, however slow the request was.
  var approveButton = document.getElementById("asu-approve");
  var readyAt = Infinity; // Date.now() at which approving is acceptable; unknown until the gate answers
  var showing = null;     // the pending "shown" request
  var busy = false;
  var holdTimer = null;
  approveButton.disabled = true;
  approveButton.textContent = "Read the card…";

  function hold() {
    if (holdTimer) { clearTimeout(holdTimer); holdTimer = null; }
    var wait = readyAt - Date.now();
    if (wait > 0) {
      approveButton.disabled = true;
      approveButton.textContent = wait === Infinity ? "Read the card…" : "Read the card… " + Math.ceil(wait / 1000);
      if (wait !== Infinity) { holdTimer = setTimeout(hold, Math.min(wait, 250)); }
      return true;
    }
    approveButton.textContent = "Approve with passkey";
    if (!busy && !document.body.dataset.decided) {
      approveButton.disabled = false;
      if (!document.body.dataset.ready) { document.body.dataset.ready = String(Date.now()); }
    }
    return false;
  }

  function shown() {
    delete document.body.dataset.ready;
    readyAt = Infinity;
    hold();
    showing = asu.post("/approve/" + encodeURIComponent(ticket) + "/shown", { view: box.dataset.view || "" }).then(function (a) {
      readyAt = Date.now() + Math.max(0, (a && a.acceptable_in_ms) || 0);
    }).catch(function () {
      readyAt = Date.now(); // the gate judges the answer anyway
    }).then(hold);
    return showing;
  }
  if (document.visibilityState === "hidden") {
    showing = new Promise(function (resolve) {
      document.addEventListener("visibilitychange", function once() {
        if (document.visibilityState !== "hidden") {
          document.removeEventListener("visibilitychange", once);
          shown().then(resolve);
        }
      });
    });
  } else {
    shown();
  }

  // Active confirmation: when the gate asks for it, the approver picks
  // the card's key value before the passkey prompt, and the pick is
  // posted with the answer. The gate checks it; a wrong one shows the
  // card again with nothing picked.
  var confirm = document.getElementById("asu-confirm");
  function picked() {
    var c = confirm && confirm.querySelector("input[name=asu-pick]:checked");
    return c ? c.value : "";
  }
  function showCardAgain() {
    confirm.querySelectorAll("input[name=asu-pick]").forEach(function (i) { i.checked = false; });
    var cardBox = document.querySelector(".asu-card") || document.querySelector("main");
    if (cardBox && cardBox.scrollIntoView) { cardBox.scrollIntoView(); }
  }

  approveButton.addEventListener("click", function () {
    if (busy) { return; }
    if (confirm && !picked()) {
      asu.say("Pick the value the card shows first.", "bad");
      document.body.dataset.refused = "pick_needed";
      return;
    }
    busy = true;
    buttons(false);
    // A click before the gate answered the showing waits for its answer.
    showing.then(function () {
      if (hold()) {
        busy = false;
        buttons(true);
        hold();
        asu.say("Read the card first: you can approve in a moment.");
        return;
      }
      asu.say("Waiting for your passkey…");
      var pick = picked();
      return sign(box.dataset.approve).then(function (cred) {
        if (confirm) {
          return asu.post("/approve/" + encodeURIComponent(ticket) + "/picked",
            { pick: pick, credential: asu.credentialJSON(cred) });
        }
        return asu.post("/approve/" + encodeURIComponent(ticket), asu.credentialJSON(cred));
      }).then(function (t) {
        busy = false;
        asu.say(t.message || "Approved.", t.status === "pending" ? "" : "ok");
        if (t.progress) { progress(t.progress); }
        if (t.status !== "pending") {
          document.body.dataset.decided = t.status;
        } else {
          document.body.dataset.voted = "yes";
        }
      });
    }).catch(function (e) {
      busy = false;
      asu.say("Not approved: " + e.message, "bad");
      document.body.dataset.refused = e.code || "error";
      buttons(true);
      if (e.code === "wrong_pick" && confirm) { showCardAgain(); }
      if (e.code === "too_fast") { shown(); } else { hold(); }
    });
  });

  function progress(text) {
    var p = document.getElementById("asu-progress");
    if (!p) {
      p = document.createElement("p");
      p.id = "asu-progress";
      p.className = "asu-progress";
      box.insertBefore(p, box.firstChild);
    }
    p.textContent = text + ".";
  }

  document.getElementById("asu-deny").addEventListener("click", function () {
    buttons(false);
    asu.say("Waiting for your passkey…");
    sign(box.dataset.deny).then(function (cred) {
      return asu.post("/approve/" + encodeURIComponent(ticket) + "/deny", {
        credential: asu.credentialJSON(cred),
        reason: document.getElementById("asu-reason").value
      });
    }).then(function (t) {
      asu.say(t.message || "Denied. The agent is told so.", "ok");
      document.body.dataset.decided = t.status;
    }).catch(function (e) {
      asu.say("Not denied: " + e.message, "bad");
      buttons(true);
    });
  });
})();

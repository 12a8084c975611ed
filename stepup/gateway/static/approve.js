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
  // says the signal comes from this page.
  function shown() {
    return asu.post("/approve/" + encodeURIComponent(ticket) + "/shown", { view: box.dataset.view || "" }).catch(function () {});
  }
  if (document.visibilityState === "hidden") {
    document.addEventListener("visibilitychange", function once() {
      if (document.visibilityState !== "hidden") {
        document.removeEventListener("visibilitychange", once);
        shown();
      }
    });
  } else {
    shown();
  }

  document.getElementById("asu-approve").addEventListener("click", function () {
    buttons(false);
    asu.say("Waiting for your passkey…");
    sign(box.dataset.approve).then(function (cred) {
      return asu.post("/approve/" + encodeURIComponent(ticket), asu.credentialJSON(cred));
    }).then(function (t) {
      asu.say("Approved. The agent may now run exactly this action, once.", "ok");
      document.body.dataset.decided = t.status;
    }).catch(function (e) {
      asu.say("Not approved: " + e.message, "bad");
      if (e.code === "too_fast") { shown(); }
      buttons(true);
    });
  });

  document.getElementById("asu-deny").addEventListener("click", function () {
    buttons(false);
    asu.say("Waiting for your passkey…");
    sign(box.dataset.deny).then(function (cred) {
      return asu.post("/approve/" + encodeURIComponent(ticket) + "/deny", {
        credential: asu.credentialJSON(cred),
        reason: document.getElementById("asu-reason").value
      });
    }).then(function (t) {
      asu.say("Denied. The agent is told so.", "ok");
      document.body.dataset.decided = t.status;
    }).catch(function (e) {
      asu.say("Not denied: " + e.message, "bad");
      buttons(true);
    });
  });
})();

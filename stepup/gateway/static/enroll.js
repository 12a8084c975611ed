// The enrollment page: create a passkey for the invited approver.
"use strict";

(function () {
  var box = document.getElementById("asu-enroll");
  if (!box) { return; }

  function creationOptions(json) {
    var o = JSON.parse(json);
    o.challenge = asu.toBytes(o.challenge);
    o.user.id = asu.toBytes(o.user.id);
    (o.excludeCredentials || []).forEach(function (c) { c.id = asu.toBytes(c.id); });
    return o;
  }

  var button = document.getElementById("asu-create");
  if (!asu.onOrigin(box)) { button.disabled = true; return; }
  button.addEventListener("click", function () {
    button.disabled = true;
    asu.say("Waiting for your authenticator…");
    navigator.credentials.create({ publicKey: creationOptions(box.dataset.options) }).then(function (cred) {
      return asu.post("/enroll", { invite: box.dataset.invite, credential: asu.credentialJSON(cred) });
    }).then(function () {
      asu.say("Passkey enrolled. Approval links will ask for it.", "ok");
      document.body.dataset.enrolled = "yes";
    }).catch(function (e) {
      asu.say("Not enrolled: " + e.message, "bad");
      button.disabled = false;
    });
  });
})();

// Shared by the approval and enrollment pages: base64url <-> bytes, and a
// credential turned into the JSON the gateway verifies.
"use strict";

var asu = (function () {
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

  function credentialJSON(cred) {
    var r = cred.response;
    var resp = { clientDataJSON: toB64(r.clientDataJSON) };
    if (r.attestationObject) {
      resp.attestationObject = toB64(r.attestationObject);
      if (r.getTransports) { resp.transports = r.getTransports(); }
    } else {
      resp.authenticatorData = toB64(r.authenticatorData);
      resp.signature = toB64(r.signature);
      if (r.userHandle) { resp.userHandle = toB64(r.userHandle); }
    }
    return {
      id: cred.id,
      rawId: toB64(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: resp
    };
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (resp) {
      return resp.json().then(function (j) {
        if (!resp.ok) {
          var e = (j && j.error) || {};
          var err = new Error(e.message || e.code || "error");
          err.code = e.code;
          throw err;
        }
        return j;
      });
    });
  }

  function say(text, kind) {
    var el = document.getElementById("asu-status");
    el.textContent = text;
    el.className = "asu-status " + (kind || "");
  }

  // onOrigin reports whether the page runs on the origin its passkeys
  // belong to, and otherwise says where to open it: a browser refuses
  // passkeys on any other origin, behind a proxy as well.
  function onOrigin(box) {
    var want = box.dataset.origin;
    if (!want || window.location.origin === want) { return true; }
    say("Passkeys for this site work only at " + want + ". Open " + want +
      window.location.pathname + window.location.search + " instead.", "bad");
    return false;
  }

  return { toBytes: toBytes, credentialJSON: credentialJSON, post: post, say: say, onOrigin: onOrigin };
})();

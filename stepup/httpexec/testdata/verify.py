import hashlib, hmac, json, time

def verify(headers, body: bytes, secret: bytes, window=300):
    """The effect message of a request the asu gate signed, or ValueError."""
    items = [i.strip().split("=", 1) for i in headers["Asu-Signature"].split(",")]
    ts = [v for k, v in items if k == "t"]
    sigs = [v.lower() for k, v in items if k == "v1"]
    if len(ts) != 1 or not ts[0].isdigit() or abs(time.time() - int(ts[0])) > window:
        raise ValueError("timestamp missing or outside the window")
    tool, key = headers["Asu-Tool"], headers["Idempotency-Key"]
    canonical = "\n".join(["asu/v1/exec", ts[0], tool, key, hashlib.sha256(body).hexdigest()])
    want = hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()
    if not any([hmac.compare_digest(want, s) for s in sigs]):
        raise ValueError("bad signature")
    msg = json.loads(body)
    if msg["idempotency_key"] != key or msg["effect"]["tool"] != tool:
        raise ValueError("headers disagree with the body")
    if hashlib.sha256(body[body.index(b'"effect":') + 9:body.rindex(b',"idempotency_key"')]).hexdigest() != msg["digest"]:
        raise ValueError("the effect does not hash to its digest")
    return msg  # msg["effect"]["args"] are the approved arguments; keep msg["idempotency_key"]

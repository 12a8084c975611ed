import hashlib, hmac, json, time

def verify(headers, body: bytes, secret: bytes, tool: str, window=300):
    """The effect message of a request the asu gate signed for tool (the one this handler runs), or ValueError."""
    items = [i.strip().partition("=") for i in headers.get("Asu-Signature", "").split(",")]
    ts = [v for k, _, v in items if k == "t"]
    sigs = [v.lower() for k, _, v in items if k == "v1" and v.isascii()]
    if len(ts) != 1 or not (ts[0].isascii() and ts[0].isdigit() and len(ts[0]) <= 12) or abs(time.time() - int(ts[0])) > window:
        raise ValueError("timestamp missing or outside the window")
    signed_tool, key = headers.get("Asu-Tool", ""), headers.get("Idempotency-Key", "")
    canonical = "\n".join(["asu/v1/exec", ts[0], signed_tool, key, hashlib.sha256(body).hexdigest()])
    want = hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()
    if not any([hmac.compare_digest(want, s) for s in sigs]):
        raise ValueError("bad signature")
    if signed_tool != tool:
        raise ValueError("the request is for another tool")
    msg = json.loads(body)
    effect = msg.get("effect") if isinstance(msg, dict) else None
    if not isinstance(effect, dict) or effect.get("tool") != tool or msg.get("idempotency_key") != key:
        raise ValueError("headers disagree with the body")
    if hashlib.sha256(body[body.index(b'"effect":') + 9:body.rindex(b',"idempotency_key"')]).hexdigest() != msg.get("digest"):
        raise ValueError("the effect does not hash to its digest")
    return msg  # msg["effect"]["args"] are the approved arguments; keep msg["idempotency_key"]

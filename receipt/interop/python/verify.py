#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks asu's published vectors (receipt/testdata/vectors) independently of asu.

    python3 verify.py DIR

Standard library and the `cryptography` package only. Everything is
recomputed from the vectors' own fields: RFC 8785 canonical JSON, the
effect digest, the card hash, the challenge (receipt.Challenge), the WebAuthn
assertion's signature under the trusted COSE key, quorum receipts, and
audit chains with the gate's signed checkpoints. One JSON line per vector
is printed: {"file", "name", "valid", "expected", "error"}. The exit status
is 0 only when every verdict is the expected one.
"""

import base64
import decimal
import hashlib
import json
import math
import os
import re
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

ZERO = "0" * 64


class Refused(Exception):
    """A vector that does not verify."""


def es6_number(x):
    """A number as ECMAScript's Number.prototype.toString writes it (RFC 8785)."""
    if isinstance(x, int) and abs(x) < 2**53:
        return str(x)
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise Refused("number is not finite")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = decimal.Decimal(repr(abs(x))).as_tuple()  # repr is the shortest round trip
    digits = "".join(map(str, t.digits)).rstrip("0") or "0"
    exp = t.exponent + len("".join(map(str, t.digits))) - len(digits)
    k, n = len(digits), len(digits) + exp  # value = 0.digits * 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return sign + mantissa + "e" + ("+" if e > 0 else "-") + str(abs(e))


def jcs(v):
    """RFC 8785: keys sorted by UTF-16 code units, minimal escapes, ES6 numbers."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return es6_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v, key=lambda s: s.encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"


def sha256(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
    return h.digest()


def b64url(s):
    if not isinstance(s, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", s):
        raise Refused("not base64url")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def hex32(s, what):
    if not isinstance(s, str) or not re.fullmatch(r"[0-9a-f]{64}", s):
        raise Refused(what + " is not 64 lowercase hex")
    return bytes.fromhex(s)


MAX_TIME = 253402300799  # the end of year 9999: the latest receipt time, Unix seconds


def unix_time(t):
    return isinstance(t, int) and not isinstance(t, bool) and 0 <= t <= MAX_TIME


def challenge(digest, nonce, expires_at, card_hash):
    if len(nonce) != 32:
        raise Refused("nonce is not 32 bytes")
    if not isinstance(expires_at, int) or isinstance(expires_at, bool) or not 0 <= expires_at < 2**63:
        raise Refused("expires_at is not a Unix time")
    return sha256("asu/v1/approve", b"\0", digest, nonce, struct.pack(">Q", expires_at), card_hash)


def cbor(b, i=0):
    """Decodes the CBOR a COSE_Key uses (integers, byte and text strings, maps); returns (value, next)."""
    major, info = b[i] >> 5, b[i] & 31
    i += 1
    if info < 24:
        n = info
    elif info in (24, 25, 26, 27):
        size = 1 << (info - 24)
        n, i = int.from_bytes(b[i:i + size], "big"), i + size
    else:
        raise Refused("unsupported CBOR")
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major in (2, 3):
        return (b[i:i + n] if major == 2 else b[i:i + n].decode()), i + n
    if major == 5:
        m = {}
        for _ in range(n):
            k, i = cbor(b, i)
            m[k], i = cbor(b, i)
        return m, i
    raise Refused("unsupported CBOR")


def verify_signature(cose, message, sig):
    key, _ = cbor(cose)
    kty, alg = key.get(1), key.get(3)
    try:
        if kty == 2 and alg == -7 and key.get(-1) == 1:  # EC2, ES256, P-256
            pub = ec.EllipticCurvePublicNumbers(int.from_bytes(key[-2], "big"), int.from_bytes(key[-3], "big"),
                                                ec.SECP256R1()).public_key()
            pub.verify(sig, message, ec.ECDSA(hashes.SHA256()))
        elif kty == 1 and alg in (-8, -19) and key.get(-1) == 6:  # OKP, EdDSA, Ed25519
            ed25519.Ed25519PublicKey.from_public_bytes(key[-2]).verify(sig, message)
        elif kty == 3 and alg == -257:  # RSA, RS256
            n = int.from_bytes(key[-1], "big")
            if n.bit_length() < 2048:
                raise Refused("RSA key shorter than 2048 bits")
            rsa.RSAPublicNumbers(int.from_bytes(key[-2], "big"), n).public_key().verify(
                sig, message, padding.PKCS1v15(), hashes.SHA256())
        else:
            raise Refused("unsupported key")
    except (InvalidSignature, ValueError) as e:
        raise Refused("signature does not verify") from e


CLIENT_DATA_READ = {"type": str, "challenge": str, "origin": str, "crossOrigin": bool}


def strict_object(pairs):
    """A JSON object that names no member twice: json.loads keeps the last one, other readers the first."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise Refused("client data names %s twice" % json.dumps(k))
        out[k] = v
    return out


def folds_to(name, want):
    """Whether name is want in another case or with a letter Unicode folds into it (long s, Kelvin sign):
    what a reader that matches names without case (Go's encoding/json) takes for it."""
    return name != want and len(name) == len(want) and all(
        a == b or a.casefold() == b.casefold() for a, b in zip(name, want))


def client_data(raw):
    """The client data as receipt.Verify reads it: strict JSON, the members it reads named exactly and by
    no other spelling, each of its type. Other members are allowed, as WebAuthn allows them."""
    cd = json.loads(raw, object_pairs_hook=strict_object)
    if not isinstance(cd, dict):
        raise Refused("client data is not an object")
    for name, v in cd.items():
        if name in CLIENT_DATA_READ:
            if type(v) is not CLIENT_DATA_READ[name]:
                raise Refused("client data %s is not of its type" % name)
        elif any(folds_to(name, want) for want in CLIENT_DATA_READ):
            raise Refused("client data member %s is named like one a verifier reads" % json.dumps(name))
    return cd


def verify_receipt(r, key, policy):
    if r.get("format") != "asu.receipt.v1":
        raise Refused("format is not asu.receipt.v1")
    digest, card_hash = hex32(r["digest"], "digest"), hex32(r["card_hash"], "card_hash")
    if not unix_time(r.get("approved_at")) or not unix_time(r.get("expires_at")):
        raise Refused("approved_at or expires_at is not a Unix time up to the end of year 9999")
    want = challenge(digest, b64url(r["nonce"]), r["expires_at"], card_hash)
    if sha256(jcs(r["effect"])) != digest:
        raise Refused("digest does not match the effect")
    if sha256("asu/v1/card", b"\0", jcs(r["card"])) != card_hash:
        raise Refused("card_hash does not match the card")
    a = r["assertion"]
    client_json = b64url(a["client_data_json"])
    cd = client_data(client_json)
    if cd.get("type") != "webauthn.get":
        raise Refused("client data type is not webauthn.get")
    if b64url(cd.get("challenge", "")) != want:
        raise Refused("client data challenge is not the receipt's")
    if cd.get("origin") != r["origin"] or r["origin"] not in policy["origins"] or cd.get("crossOrigin") is True:
        raise Refused("origin is not the receipt's, not allowed, or cross-origin")
    auth = b64url(a["authenticator_data"])
    if len(auth) < 37 or r["rp_id"] != policy["rp_id"] or auth[:32] != sha256(policy["rp_id"]):
        raise Refused("rp_id or its hash in the authenticator data is not the policy's")
    if not auth[32] & 0x01:
        raise Refused("user not present")
    if not auth[32] & 0x04:
        raise Refused("user not verified")
    if b64url(r["approver"]["public_key"]) != key:
        raise Refused("embedded public key is not the trusted key")
    verify_signature(key, auth + sha256(client_json), b64url(a["signature"]))


def holder(cose):
    """Who can sign for a COSE_Key, the same for every encoding of one key: its Ed25519 point, its P-256
    point, or its RSA modulus (whoever can factor it signs under any exponent). The algorithm label does
    not count: Ed25519 is one key as EdDSA (-8) and as Ed25519 (-19)."""
    key, _ = cbor(cose)
    kty = key.get(1)
    if kty == 1:
        return ("ed25519", key[-2])
    if kty == 2:
        return ("p256", key[-2], key[-3])
    if kty == 3:
        return ("rsa", int.from_bytes(key[-1], "big"))
    raise Refused("unsupported key")


def verify_quorum(q, people, keys, k, policy):
    if q.get("format") != "asu.quorum.v1" or not q.get("receipts"):
        raise Refused("not an asu.quorum.v1 quorum")
    holders = {}
    for p in people:
        for n in p["keys"]:
            h = holder(b64url(keys[n]["cose"]))
            if holders.setdefault(h, p["user"]) != p["user"]:
                raise Refused("%s and %s share a key" % (holders[h], p["user"]))
    first, counted = q["receipts"][0], set()
    for r in q["receipts"]:
        if any(r[f] != first[f] for f in ("digest", "nonce", "card_hash", "expires_at")):
            raise Refused("a receipt is about another approval request")
        person = next((p for p in people if any(keys[n]["cose"] == r["approver"]["public_key"] for n in p["keys"])), None)
        if person is None or r["approver"]["user"] != person["user"]:
            continue
        try:
            verify_receipt(r, b64url(r["approver"]["public_key"]), policy)
            counted.add(person["user"])
        except Refused:
            pass  # a receipt that does not verify counts for nobody
    if len(counted) < k:
        raise Refused("%d distinct trusted approvers verify, %d needed" % (len(counted), k))


def record_hash(rec):
    return sha256("asu/v1/audit", b"\0", jcs(dict(rec, hash=ZERO))).hex()


def link(records, prev):
    for i, r in enumerate(records):
        if i > 0 and r["seq"] != records[i - 1]["seq"] + 1:
            raise Refused("sequence jumps at seq %d" % r["seq"])
        if r["prev_hash"] != prev:
            raise Refused("prev_hash of seq %d is not the previous hash" % r["seq"])
        prev = record_hash(r)
        if prev != r["hash"]:
            raise Refused("hash of seq %d does not match its content" % r["seq"])


def verify_chain(records, anchor, cp, gate_key):
    if cp is None:
        start = anchor or ZERO
        if start == ZERO and records and records[0]["seq"] != 1:
            raise Refused("chain does not start at seq 1")
        return link(records, start)
    msg = sha256("asu/v1/checkpoint", b"\0", struct.pack(">Q", cp["seq"]), hex32(cp["hash"], "hash"),
                 struct.pack(">Q", cp["time"]))
    try:
        gate_key.verify(base64.b64decode(cp["sig"], validate=True), msg)
    except (InvalidSignature, ValueError) as e:
        raise Refused("checkpoint signature does not verify") from e
    if cp["seq"] == 0 and cp["hash"] != ZERO:
        raise Refused("checkpoint at seq 0 with a hash")
    if not records:
        return None
    first = records[0]
    if first["seq"] >= 1 and first["seq"] == cp["seq"] + 1:
        if first["prev_hash"] != cp["hash"]:
            raise Refused("prev_hash is not the checkpoint hash")
        return link(records, cp["hash"])
    if first["seq"] != 1:
        raise Refused("chain neither starts at seq 1 nor right after the checkpoint")
    link(records, ZERO)
    if cp["seq"] - 1 >= len(records) or records[cp["seq"] - 1]["hash"] != cp["hash"]:
        raise Refused("the record at the checkpoint's seq is missing or has another hash")
    return None


def check_challenge(v):
    got = challenge(hex32(v["digest"], "digest"), bytes.fromhex(v["nonce"]), v["expires_at"],
                    hex32(v["card_hash"], "card_hash"))
    deny = sha256("asu/v1/deny", b"\0", got)
    if got.hex() != v["challenge"] or base64.urlsafe_b64encode(got).rstrip(b"=").decode() != v["challenge_b64url"]:
        raise Refused("challenge differs")
    if deny.hex() != v["deny_challenge"]:
        raise Refused("deny challenge differs")


def check_card_hash(v):
    card = json.loads(v["card_json"])
    if jcs(card) != v["canonical"]:
        raise Refused("canonical form differs")
    if sha256("asu/v1/card", b"\0", jcs(card)).hex() != v["card_hash"]:
        raise Refused("card hash differs")


def main(argv):
    if len(argv) != 2:
        print("usage: python3 verify.py DIR", file=sys.stderr)
        return 2

    def load(name):
        with open(os.path.join(argv[1], name), encoding="utf-8") as f:
            return json.load(f)

    agree = True

    def report(file, name, expected, check):
        nonlocal agree
        error = ""
        try:
            check()
        except (Refused, KeyError, TypeError, ValueError, IndexError) as e:
            error = str(e) or type(e).__name__
        agree = agree and (error == "") == expected
        print(json.dumps({"file": file, "name": name, "valid": error == "", "expected": expected, "error": error}))

    for v in load("challenge.json")["vectors"]:
        report("challenge.json", v["name"], True, lambda: check_challenge(v))
    for v in load("card_hash.json")["vectors"]:
        report("card_hash.json", v["name"], True, lambda: check_card_hash(v))
    rf = load("receipts.json")
    for v in rf["vectors"]:
        report("receipts.json", v["name"], v["valid"],
               lambda: verify_receipt(v["receipt"], b64url(rf["keys"][v["key"]]["cose"]), rf["policy"]))
    qf = load("quorum.json")
    for v in qf["vectors"]:
        report("quorum.json", v["name"], v["valid"],
               lambda: verify_quorum(v["quorum"], v["people"], qf["keys"], v["k"], qf["policy"]))
    cf = load("audit_chains.json")
    gate_key = ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(cf["gate_public_key"]))
    for v in cf["vectors"]:
        report("audit_chains.json", v["name"], v["valid"],
               lambda: verify_chain(v["records"], v.get("anchor"), v.get("checkpoint"), gate_key))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

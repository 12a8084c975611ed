// SPDX-License-Identifier: Apache-2.0
// verify.mjs checks asu receipts (format asu.receipt.v1) with
// @simplewebauthn/server, a WebAuthn implementation independent of asu.
//
//   node verify.mjs --key KEYFILE --rp-id ID --origin URL FILE...
//
// KEYFILE holds the approver's COSE_Key in base64url. Everything asu binds
// is recomputed here from the receipt's own fields: the effect's digest and
// the card hash (RFC 8785 canonical JSON, SHA-256), and the challenge of
// DESIGN rule 5; the WebAuthn assertion is then verified against that
// challenge by verifyAuthenticationResponse. One JSON line per FILE is
// printed: {"file", "verified", "error"}. The exit status is 0 only when
// every file verified.
//
// The functions are exported for vectors.mjs, which checks the published
// vectors in ../testdata/vectors.

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { verifyAuthenticationResponse } from '@simplewebauthn/server';

// jcs returns the RFC 8785 canonical form of a parsed JSON value: keys
// sorted by UTF-16 code units (JavaScript's default sort), primitives as
// ECMAScript's JSON.stringify writes them, which RFC 8785 adopts.
export function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}

export const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

export const b64url = (s) => {
  if (typeof s !== 'string' || !/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('not base64url');
  return Buffer.from(s, 'base64url');
};

export const hex32 = (s, what) => {
  if (typeof s !== 'string' || !/^[0-9a-f]{64}$/.test(s)) throw new Error(`${what} is not 64 lowercase hex`);
  return Buffer.from(s, 'hex');
};

// MAX_TIME is the latest receipt time, Unix seconds: the end of year 9999.
export const MAX_TIME = 253402300799;

const unixTime = (t) => Number.isSafeInteger(t) && t >= 0 && t <= MAX_TIME;

// strictJSON parses JSON text as JSON.parse does, but refuses an object
// that names a member twice, at any level: JSON.parse keeps the last one,
// other readers the first.
export function strictJSON(text) {
  let i = 0;
  const fail = (why) => { throw new Error(`client data is not strict JSON: ${why}`); };
  const space = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const string = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i));
    if (!m) fail('bad string');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const out = {};
      const seen = new Set();
      space();
      if (text[i] === '}') { i++; return out; }
      for (;;) {
        space();
        if (text[i] !== '"') fail('member name is not a string');
        const key = string();
        if (seen.has(key)) fail(`member ${JSON.stringify(key)} twice`);
        seen.add(key);
        space();
        if (text[i++] !== ':') fail('no colon');
        Object.defineProperty(out, key, { value: value(), enumerable: true, writable: true, configurable: true });
        space();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === '}') return out;
        fail('object not closed');
      }
    }
    if (c === '[') {
      i++;
      const out = [];
      space();
      if (text[i] === ']') { i++; return out; }
      for (;;) {
        out.push(value());
        space();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === ']') return out;
        fail('array not closed');
      }
    }
    if (c === '"') return string();
    const m = /^(?:true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(text.slice(i));
    if (!m) fail('bad value');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  space();
  if (i !== text.length) fail('data after the value');
  return v;
}

// foldsTo reports whether name is the client data member want in another
// case or with a letter Unicode folds into it (ſ for s, K for k): what a
// reader that matches names without case (Go's encoding/json) takes for it.
function foldsTo(name, want) {
  const a = [...name];
  const b = [...want];
  return name !== want && a.length === b.length && a.every((c, k) => c === b[k] ||
    c.toUpperCase() === b[k].toUpperCase() || c.toLowerCase() === b[k].toLowerCase());
}

// clientDataOf reads the client data as receipt.Verify does: strict JSON,
// the members it reads named exactly and by no other spelling, each of its
// type. Other members are allowed, as WebAuthn allows them.
export function clientDataOf(raw) {
  const cd = strictJSON(raw.toString('utf8'));
  if (cd === null || typeof cd !== 'object' || Array.isArray(cd)) throw new Error('client data is not an object');
  const read = { type: 'string', challenge: 'string', origin: 'string', crossOrigin: 'boolean' };
  for (const [name, v] of Object.entries(cd)) {
    if (name in read) {
      if (typeof v !== read[name]) throw new Error(`client data ${name} is not a ${read[name]}`);
    } else if (Object.keys(read).some((want) => foldsTo(name, want))) {
      throw new Error(`client data member ${JSON.stringify(name)} is named like one a verifier reads`);
    }
  }
  return cd;
}

// challenge is DESIGN rule 5:
// SHA-256("asu/v1/approve" ‖ 0x00 ‖ digest ‖ nonce ‖ uint64be(expires_at) ‖ card_hash)
export function challenge(r) {
  const nonce = b64url(r.nonce);
  if (nonce.length !== 32) throw new Error('nonce is not 32 bytes');
  if (!Number.isSafeInteger(r.expires_at) || r.expires_at < 0) throw new Error('expires_at is not a Unix time');
  const exp = Buffer.alloc(8);
  exp.writeBigUInt64BE(BigInt(r.expires_at));
  return sha256(Buffer.from('asu/v1/approve'), Buffer.from([0]), hex32(r.digest, 'digest'), nonce, exp,
    hex32(r.card_hash, 'card_hash'));
}

// verifyReceipt throws unless key (a COSE_Key) approved exactly r's effect
// for rpID, at one of origins (a string or a list).
export async function verifyReceipt(r, key, rpID, origins) {
  const allowed = [].concat(origins);
  if (r.format !== 'asu.receipt.v1') throw new Error('format is not asu.receipt.v1');
  if (!unixTime(r.approved_at) || !unixTime(r.expires_at)) {
    throw new Error('approved_at or expires_at is not a Unix time up to the end of year 9999');
  }
  if (sha256(jcs(r.effect)).toString('hex') !== r.digest) throw new Error('digest does not match the effect');
  const cardHash = sha256(Buffer.from('asu/v1/card'), Buffer.from([0]), jcs(r.card)).toString('hex');
  if (cardHash !== r.card_hash) throw new Error('card_hash does not match the card');
  if (r.rp_id !== rpID || !allowed.includes(r.origin)) throw new Error('rp_id or origin is not the expected one');
  // @simplewebauthn/server does not judge crossOrigin; an approval made
  // inside another site's frame is not one the approval page asked for.
  const clientData = clientDataOf(b64url(r.assertion.client_data_json));
  if (clientData.crossOrigin === true) throw new Error('approval made in a cross-origin frame');
  if (!Buffer.from(key).equals(b64url(r.approver.public_key))) throw new Error('embedded public key is not the trusted key');

  const id = r.approver.credential_id;
  const a = r.assertion;
  const { verified } = await verifyAuthenticationResponse({
    response: {
      id,
      rawId: id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        authenticatorData: a.authenticator_data,
        clientDataJSON: a.client_data_json,
        signature: a.signature,
        userHandle: a.user_handle || undefined,
      },
    },
    expectedChallenge: challenge(r).toString('base64url'),
    expectedOrigin: r.origin,
    expectedRPID: rpID,
    expectedType: 'webauthn.get',
    credential: { id, publicKey: new Uint8Array(key), counter: 0 },
    requireUserVerification: true,
  });
  if (!verified) throw new Error('signature does not verify');
}

function parseArgs(argv) {
  const opts = { files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--key' || a === '--rp-id' || a === '--origin') {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      opts[a.slice(2)] = argv[++i];
    } else {
      opts.files.push(a);
    }
  }
  if (!opts.key || !opts['rp-id'] || !opts.origin || opts.files.length === 0) {
    throw new Error('usage: node verify.mjs --key KEYFILE --rp-id ID --origin URL FILE...');
  }
  return opts;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  const key = b64url(readFileSync(opts.key, 'utf8').trim());
  let all = true;
  for (const file of opts.files) {
    let error = '';
    try {
      await verifyReceipt(JSON.parse(readFileSync(file, 'utf8')), key, opts['rp-id'], opts.origin);
    } catch (e) {
      error = String(e && e.message ? e.message : e);
    }
    all &&= error === '';
    console.log(JSON.stringify({ file, verified: error === '', error }));
  }
  process.exit(all ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();

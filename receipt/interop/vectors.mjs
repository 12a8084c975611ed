// SPDX-License-Identifier: Apache-2.0
// vectors.mjs checks asu's published vectors (../testdata/vectors) with
// verify.mjs's receipt verifier (@simplewebauthn/server) and Node's own
// crypto: the challenge, the card hash, receipts, quorum receipts and
// audit chains with signed checkpoints.
//
//   node vectors.mjs DIR
//
// One JSON line per vector is printed: {"file", "name", "valid",
// "expected", "error"}. The exit status is 0 only when every verdict is
// the expected one.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { jcs, sha256, b64url, hex32, challenge, verifyReceipt } from './verify.mjs';

const ZERO = '0'.repeat(64);

function deny(approve) {
  return sha256(Buffer.from('asu/v1/deny'), Buffer.from([0]), approve);
}

function cardHash(card) {
  return sha256(Buffer.from('asu/v1/card'), Buffer.from([0]), jcs(card)).toString('hex');
}

// checkChallenge compares a vector's challenge with the one recomputed
// here: verify.mjs reads the nonce as base64url, the vector gives hex.
function checkChallenge(v) {
  const got = challenge({ digest: v.digest, nonce: Buffer.from(v.nonce, 'hex').toString('base64url'),
    expires_at: v.expires_at, card_hash: v.card_hash });
  if (got.toString('hex') !== v.challenge) throw new Error('challenge differs');
  if (got.toString('base64url') !== v.challenge_b64url) throw new Error('challenge_b64url differs');
  if (deny(got).toString('hex') !== v.deny_challenge) throw new Error('deny challenge differs');
}

function checkCardHash(v) {
  const card = JSON.parse(v.card_json);
  if (jcs(card) !== v.canonical) throw new Error('canonical form differs');
  if (cardHash(card) !== v.card_hash) throw new Error('card hash differs');
}

// holder names who can sign for a COSE_Key, the same for every encoding
// of one key: its Ed25519 point, its P-256 point, or its RSA modulus
// (whoever can factor it signs under any exponent). The algorithm label
// does not count: Ed25519 is one key as EdDSA (-8) and as Ed25519 (-19).
function holder(cose) {
  const k = decodeCredentialPublicKey(b64url(cose));
  const hex = (label) => Buffer.from(k.get(label)).toString('hex');
  switch (k.get(1)) {
    case 1: return `ed25519:${hex(-2)}`;
    case 2: return `p256:${hex(-2)}${hex(-3)}`;
    case 3: return `rsa:${BigInt('0x' + hex(-1)).toString(16)}`;
  }
  throw new Error('unsupported key');
}

// verifyQuorum: every receipt about the first one's request, and at least
// k distinct people with a receipt that verifies under one of their keys
// and names them. People who share a key are refused.
async function verifyQuorum(q, people, keys, k, policy) {
  if (q.format !== 'asu.quorum.v1' || !Array.isArray(q.receipts) || q.receipts.length === 0) {
    throw new Error('not an asu.quorum.v1 quorum');
  }
  const holders = new Map();
  for (const p of people) {
    for (const name of p.keys) {
      const h = holder(keys[name].cose);
      if (holders.has(h) && holders.get(h) !== p.user) throw new Error(`${holders.get(h)} and ${p.user} share a key`);
      holders.set(h, p.user);
    }
  }
  const first = q.receipts[0];
  const counted = new Set();
  for (const r of q.receipts) {
    if (r.digest !== first.digest || r.nonce !== first.nonce || r.card_hash !== first.card_hash ||
      r.expires_at !== first.expires_at) {
      throw new Error('a receipt is about another approval request');
    }
    const person = people.find((p) => p.keys.some((name) => keys[name].cose === r.approver.public_key));
    if (!person || r.approver.user !== person.user) continue;
    try {
      await verifyReceipt(r, b64url(r.approver.public_key), policy.rp_id, policy.origins);
      counted.add(person.user);
    } catch {
      // a receipt that does not verify counts for nobody
    }
  }
  if (counted.size < k) throw new Error(`${counted.size} distinct trusted approvers verify, ${k} needed`);
}

function recordHash(rec) {
  return sha256(Buffer.from('asu/v1/audit'), Buffer.from([0]), jcs({ ...rec, hash: ZERO })).toString('hex');
}

function link(records, prev) {
  records.forEach((r, i) => {
    if (i > 0 && r.seq !== records[i - 1].seq + 1) throw new Error(`sequence jumps at seq ${r.seq}`);
    if (r.prev_hash !== prev) throw new Error(`prev_hash of seq ${r.seq} is not the previous hash`);
    const h = recordHash(r);
    if (h !== r.hash) throw new Error(`hash of seq ${r.seq} does not match its content`);
    prev = h;
  });
}

function checkpointMessage(cp) {
  const seq = Buffer.alloc(8);
  seq.writeBigUInt64BE(BigInt(cp.seq));
  const time = Buffer.alloc(8);
  time.writeBigUInt64BE(BigInt(cp.time));
  return sha256(Buffer.from('asu/v1/checkpoint'), Buffer.from([0]), seq, hex32(cp.hash, 'checkpoint hash'), time);
}

function verifyChain(records, anchor, cp, gateKey) {
  if (!cp) {
    const from = anchor || ZERO;
    if (from === ZERO && records.length > 0 && records[0].seq !== 1) throw new Error('chain does not start at seq 1');
    return link(records, from);
  }
  const sig = Buffer.from(cp.sig, 'base64');
  if (sig.length !== 64 || !cryptoVerify(null, checkpointMessage(cp), gateKey, sig)) {
    throw new Error('checkpoint signature does not verify');
  }
  if (cp.seq === 0 && cp.hash !== ZERO) throw new Error('checkpoint at seq 0 with a hash');
  if (records.length === 0) return;
  const first = records[0];
  if (first.seq >= 1 && first.seq === cp.seq + 1) {
    if (first.prev_hash !== cp.hash) throw new Error('prev_hash is not the checkpoint hash');
    return link(records, cp.hash);
  }
  if (first.seq !== 1) throw new Error('chain neither starts at seq 1 nor right after the checkpoint');
  link(records, ZERO);
  const at = cp.seq - 1;
  if (at >= records.length) throw new Error('chain ends before the checkpoint');
  if (records[at].hash !== cp.hash) throw new Error('record hash is not the checkpoint hash');
}

function ed25519Key(hex) {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hex, 'hex')]);
  return createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

async function main() {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node vectors.mjs DIR');
    process.exit(2);
  }
  const load = (name) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
  let agree = true;
  const report = async (file, name, expected, check) => {
    let error = '';
    try {
      await check();
    } catch (e) {
      error = String(e && e.message ? e.message : e);
    }
    const valid = error === '';
    agree &&= valid === expected;
    console.log(JSON.stringify({ file, name, valid, expected, error }));
  };

  for (const v of load('challenge.json').vectors) await report('challenge.json', v.name, true, () => checkChallenge(v));
  for (const v of load('card_hash.json').vectors) await report('card_hash.json', v.name, true, () => checkCardHash(v));
  const rf = load('receipts.json');
  for (const v of rf.vectors) {
    await report('receipts.json', v.name, v.valid,
      () => verifyReceipt(v.receipt, b64url(rf.keys[v.key].cose), rf.policy.rp_id, rf.policy.origins));
  }
  const qf = load('quorum.json');
  for (const v of qf.vectors) {
    await report('quorum.json', v.name, v.valid, () => verifyQuorum(v.quorum, v.people, qf.keys, v.k, qf.policy));
  }
  const cf = load('audit_chains.json');
  const gateKey = ed25519Key(cf.gate_public_key);
  for (const v of cf.vectors) {
    await report('audit_chains.json', v.name, v.valid, () => verifyChain(v.records, v.anchor, v.checkpoint, gateKey));
  }
  process.exit(agree ? 0 : 1);
}

main();

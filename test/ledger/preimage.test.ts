import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  ZERO_HASH_HEX,
  checkpointSigPreimage,
  eventSigPreimage,
  isHex32,
  lp,
  metaCommitment,
  metaCommitmentFromHex,
  metaCommitmentPreimage,
  recordHash,
  recordHashFromHex,
  recordPreimage,
  type RecordHashFields,
} from '../../src/ledger/preimage.js';

/** A reader that walks a preimage the way a third-party verifier would. */
function reader(buf: Buffer) {
  let off = 0;
  return {
    lp(): Buffer {
      const n = buf.readUInt32BE(off);
      const out = buf.subarray(off + 4, off + 4 + n);
      off += 4 + n;
      return out;
    },
    u64(): bigint {
      const v = buf.readBigUInt64BE(off);
      off += 8;
      return v;
    },
    fixed(n: number): Buffer {
      const out = buf.subarray(off, off + n);
      off += n;
      return out;
    },
    done(): boolean {
      return off === buf.length;
    },
  };
}

const fields: RecordHashFields = {
  tenant: '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f',
  seq: 2 ** 40 + 5,
  occurred_at: '2026-06-02T10:00:00.123456789Z',
  actor: 'user:Zoë',
  actor_kind: 'user',
  action: 'agent.create',
  target_kind: 'agent',
  target_id: '',
};

test('lp is a u32 big-endian byte length then the bytes', () => {
  assert.deepEqual(lp('ab'), Buffer.from([0, 0, 0, 2, 0x61, 0x62]));
  assert.deepEqual(lp('é'), Buffer.from([0, 0, 0, 2, 0xc3, 0xa9]), 'length counts UTF-8 bytes, not characters');
  assert.deepEqual(lp(new Uint8Array(0)), Buffer.from([0, 0, 0, 0]));
  assert.equal(lp(Buffer.alloc(300)).readUInt32BE(0), 300);
});

test('record preimage has the DECISIONS.md layout, field by field', () => {
  const commitment = randomBytes(32);
  const payload = randomBytes(32);
  const prev = randomBytes(32);
  const pre = recordPreimage(fields, commitment, payload, prev);
  const r = reader(pre);
  assert.equal(r.lp().toString(), 'svc.audit.v1');
  assert.equal(r.lp().toString(), fields.tenant);
  assert.equal(r.u64(), BigInt(fields.seq));
  assert.equal(r.lp().toString(), fields.occurred_at);
  assert.equal(r.lp().toString(), 'user:Zoë');
  assert.equal(r.lp().toString(), 'user');
  assert.equal(r.lp().toString(), 'agent.create');
  assert.equal(r.lp().toString(), 'agent');
  assert.equal(r.lp().length, 0, 'empty target_id is lp("") = 4 zero bytes');
  assert.deepEqual(r.fixed(32), commitment);
  assert.deepEqual(r.fixed(32), payload);
  assert.deepEqual(r.fixed(32), prev);
  assert.ok(r.done());
  assert.deepEqual(recordHash(fields, commitment, payload, prev), createHash('sha256').update(pre).digest());
});

test('absent payload hash and prev hash are 32 zero bytes', () => {
  const commitment = randomBytes(32);
  const pre = recordPreimage(fields, commitment, null, null);
  assert.deepEqual(pre.subarray(pre.length - 64), Buffer.alloc(64));
  assert.deepEqual(recordPreimage(fields, commitment, Buffer.alloc(32), Buffer.alloc(32)), pre);
});

test('the hex path (verification) equals the binary path (sealing)', () => {
  const commitment = randomBytes(32);
  const payload = randomBytes(32);
  const prev = randomBytes(32);
  const bin = recordHash(fields, commitment, payload, prev).toString('hex');
  assert.equal(recordHashFromHex(fields, commitment.toString('hex'), payload.toString('hex'), prev.toString('hex')), bin);
  assert.equal(
    recordHashFromHex(fields, commitment.toString('hex'), null, ZERO_HASH_HEX),
    recordHash(fields, commitment, null, null).toString('hex'),
  );
});

test('non-canonical hex is refused instead of decoded', () => {
  const c = randomBytes(32).toString('hex');
  assert.equal(recordHashFromHex(fields, c.toUpperCase().replace(/^./, 'A'), null, ZERO_HASH_HEX), null);
  assert.equal(recordHashFromHex(fields, c, null, `${ZERO_HASH_HEX.slice(1)}g`), null);
  assert.equal(recordHashFromHex(fields, c, 'ab', ZERO_HASH_HEX), null);
  assert.equal(metaCommitmentFromHex(c.slice(2), '{}'), null);
  assert.equal(isHex32(c), true);
  assert.equal(isHex32('A'.repeat(64)), false);
  assert.equal(isHex32(`${c}00`), false);
});

test('meta commitment = SHA-256(lp(domain) ‖ lp(blind) ‖ meta bytes)', () => {
  const blind = randomBytes(32);
  const meta = '{"k":"vé"}';
  const pre = metaCommitmentPreimage(blind, meta);
  const r = reader(pre);
  assert.equal(r.lp().toString(), 'svc.audit.meta.v1');
  assert.deepEqual(r.lp(), blind);
  assert.equal(r.fixed(pre.length - 4 - 17 - 4 - 32).toString(), meta, 'meta bytes are not length-prefixed');
  assert.ok(r.done());
  const expected = createHash('sha256').update(pre).digest();
  assert.deepEqual(metaCommitment(blind, meta), expected);
  assert.equal(metaCommitmentFromHex(blind.toString('hex'), meta), expected.toString('hex'));
  assert.throws(() => metaCommitment(blind.subarray(1), meta), RangeError);
});

test('event and checkpoint signature preimages', () => {
  const hash = randomBytes(32);
  const ev = eventSigPreimage(fields.tenant, 7, hash);
  let r = reader(ev);
  assert.equal(r.lp().toString(), 'svc.audit.event.v1');
  assert.equal(r.lp().toString(), fields.tenant);
  assert.equal(r.u64(), 7n);
  assert.deepEqual(r.lp(), hash, 'lp over the 32 raw hash bytes');
  assert.ok(r.done());
  assert.deepEqual(eventSigPreimage(fields.tenant, 7, hash.toString('hex')), ev);

  const cp = checkpointSigPreimage(fields.tenant, 2 ** 33, hash);
  r = reader(cp);
  assert.equal(r.lp().toString(), 'svc.audit.checkpoint.v1');
  assert.equal(r.lp().toString(), fields.tenant);
  assert.equal(r.u64(), 2n ** 33n);
  assert.deepEqual(r.lp(), hash);
  assert.ok(r.done());
  assert.throws(() => eventSigPreimage(fields.tenant, -1, hash), RangeError);
  assert.throws(() => eventSigPreimage(fields.tenant, 1.5, hash), RangeError);
  assert.throws(() => eventSigPreimage(fields.tenant, 1, hash.toString('hex').toUpperCase()), RangeError);
});

test('long fields grow the scratch buffer without corrupting later preimages', () => {
  const long = { ...fields, target_id: 'x'.repeat(100_000) };
  const c = randomBytes(32);
  const a = recordPreimage(long, c, null, null);
  assert.equal(a.length, 4 + 12 + 4 + 36 + 8 + 4 + 30 + 4 + Buffer.byteLength(fields.actor) + 4 + 4 + 4 + 12 + 4 + 5 + 4 + 100_000 + 96);
  const small = recordPreimage(fields, c, null, null);
  assert.deepEqual(recordHash(fields, c, null, null), createHash('sha256').update(small).digest());
});

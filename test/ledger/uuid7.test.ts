import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUuid7, uuid7, uuid7EpochMs } from '../../src/ledger/uuid7.js';

test('UUIDv7 layout: lowercase, version 7, RFC 9562 variant, 48-bit ms timestamp', () => {
  const ms = Date.UTC(2026, 5, 2, 10, 0, 0, 123);
  const id = uuid7(ms, 500_000);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(isUuid7(id));
  assert.equal(uuid7EpochMs(id), ms);
  assert.equal(id.slice(15, 18), '800', 'rand_a carries the sub-millisecond fraction (0.5 ms → 0x800)');
  assert.equal(isUuid7(id.toUpperCase()), false);
  assert.equal(isUuid7('01970c2e-4b1a-4c3d-8e4f-5a6b7c8d9e0f'), false, 'v4 is not v7');
});

test('ids are unique and sort by time', () => {
  const ids = Array.from({ length: 5000 }, (_, i) => uuid7(1_750_000_000_000 + Math.floor(i / 10), (i % 10) * 100_000));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
});

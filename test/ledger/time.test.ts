import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertTimestamp,
  formatTimestamp,
  isCanonicalTimestamp,
  nowEpochNs,
  nowTimestamp,
  parseTimestamp,
  timestampFromDate,
  timestampToEpochMs,
  timestampToEpochNs,
} from '../../src/ledger/time.js';

test('nowTimestamp is canonical, close to the wall clock and strictly increasing', () => {
  const before = Date.now();
  const stamps = Array.from({ length: 2000 }, () => nowTimestamp());
  const after = Date.now();
  let prev = '';
  for (const s of stamps) {
    assert.match(s, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
    assert.ok(isCanonicalTimestamp(s));
    // Same-length fixed-format text: lexical order is time order.
    assert.ok(s > prev, `${s} should sort after ${prev}`);
    prev = s;
  }
  const first = timestampToEpochMs(stamps[0] as string);
  assert.ok(first >= before - 5 && first <= after + 5, 'anchored to the wall clock');
  assert.ok(stamps.some((s) => !s.endsWith('000000Z')), 'sub-millisecond digits are real, not padding');
});

test('nowEpochNs never goes backwards', () => {
  let prev = nowEpochNs();
  for (let i = 0; i < 10000; i++) {
    const n = nowEpochNs();
    assert.ok(n > prev);
    prev = n;
  }
});

test('format and parse round-trip at nanosecond precision', () => {
  const text = '2026-06-02T10:00:00.123456789Z';
  const ns = timestampToEpochNs(text);
  assert.equal(ns, BigInt(Date.UTC(2026, 5, 2, 10, 0, 0, 123)) * 1_000_000n + 456_789n);
  assert.equal(formatTimestamp(ns), text);
  assert.equal(timestampToEpochMs(text), Date.UTC(2026, 5, 2, 10, 0, 0, 123));
  assert.deepEqual(parseTimestamp(text), { ms: Date.UTC(2026, 5, 2, 10, 0, 0, 123), subMsNs: 456789 });
  assert.equal(timestampFromDate(new Date(Date.UTC(2026, 5, 2, 10, 0, 0, 5))), '2026-06-02T10:00:00.005000000Z');
  assert.equal(formatTimestamp(-1n), '1969-12-31T23:59:59.999999999Z');
  assert.equal(formatTimestamp(0n), '1970-01-01T00:00:00.000000000Z');
});

test('only the canonical spelling is accepted', () => {
  const bad = [
    '2026-06-02T10:00:00Z',
    '2026-06-02T10:00:00.000Z',
    '2026-06-02T10:00:00.000000000+00:00',
    '2026-06-02t10:00:00.000000000Z',
    '2026-06-02T10:00:00.000000000z',
    '2026-06-02 10:00:00.000000000Z',
    '2026-02-30T10:00:00.000000000Z',
    '2026-13-01T10:00:00.000000000Z',
    '2026-06-02T24:00:00.000000000Z',
    '2026-06-02T10:60:00.000000000Z',
    '2026-06-02T10:00:60.000000000Z',
    ' 2026-06-02T10:00:00.000000000Z',
    '２026-06-02T10:00:00.000000000Z',
  ];
  for (const b of bad) {
    assert.equal(isCanonicalTimestamp(b), false, b);
    assert.throws(() => assertTimestamp(b), RangeError);
  }
  assert.ok(isCanonicalTimestamp('2024-02-29T23:59:59.999999999Z'));
  assert.equal(isCanonicalTimestamp('2023-02-29T00:00:00.000000000Z'), false);
  assert.ok(isCanonicalTimestamp('0050-01-01T00:00:00.000000000Z'), 'two-digit years are not shifted to 19xx');
  assert.equal(timestampToEpochMs('0050-01-01T00:00:00.000000000Z'), new Date('0050-01-01T00:00:00Z').getTime());
});

// Last in the file: the process's stamps run ahead of the wall clock afterwards.
test('after the host was suspended (the wall clock jumped ahead of the monotonic one) stamps follow the wall clock again', () => {
  const realNow = Date.now;
  nowTimestamp();
  try {
    // A minute of suspend: the wall clock moved on, the monotonic clock did not.
    const jump = 60_000;
    Date.now = () => realNow() + jump;
    const after = timestampToEpochMs(nowTimestamp());
    const wall = Date.now();
    assert.ok(Math.abs(after - wall) <= 5, `stamped ${after}, wall clock ${wall}: not a minute late`);
    const ahead = nowTimestamp();
    // The wall clock stepped back again: stamps still never go backwards.
    Date.now = realNow;
    const back = nowTimestamp();
    assert.ok(back > ahead, `${back} should sort after ${ahead}`);
  } finally {
    Date.now = realNow;
  }
});

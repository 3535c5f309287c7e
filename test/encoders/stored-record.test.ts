/**
 * The fast paths of the audit export (`encodeStoredRecord`, CEF, LEEF and syslog): for every record,
 * hostile or not, they must return exactly the bytes of the reference encoder. `text` is built as the export reader
 * builds it (export-iterator.ts `sqliteStoredRowIterator`): the free-text fields joined by U+0001,
 * undefined when a field holds U+0001 itself (the reader then reads the row per column).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cefEncoder, encodeCefRecord, encodeCefStoredRecord } from '../../src/encoders/cef.js';
import { encodeLeefRecord, encodeLeefStoredRecord, leefEncoder } from '../../src/encoders/leef.js';
import type { EncodeOptions } from '../../src/encoders/encoder.js';
import { encodeSyslogRecord, encodeSyslogStoredRecord, syslogEncoder } from '../../src/encoders/syslog.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { DEVICE, HOSTILE, SYSLOG_OPTS, baseRecord, hostileRecord, hostileString, recordArb } from './fixtures/records.js';

/** The reader's `text` of a record. */
function storedText(r: AuditRecord): string | undefined {
  const texts = [
    String(r.seq),
    r.meta === null ? '1' : '0',
    r.occurred_at,
    r.actor,
    r.actor_kind,
    r.action,
    r.target_kind,
    r.target_id,
    r.meta ?? '',
  ];
  return texts.some((t) => t.includes('\u0001')) ? undefined : texts.join('\u0001');
}


/** Texts the fast path takes (no `%`, `\`, `=`, controls), mixed with everything a value layer touches. */
const cleanString = fc.string({
  unit: fc.constantFrom('a', 'Z', '0', '.', ':', '-', '_', '|', ' ', '"', '{', '}', ']', '[', ',', 'é', '😀', '\u2028', '\uFEFF'),
  maxLength: 16,
});
const anyString = fc.oneof(
  { arbitrary: cleanString, weight: 16 },
  { arbitrary: hostileString(), weight: 2 },
  { arbitrary: fc.constantFrom('\u0001', 'a\u0001b', '\uD800', 'x\uDC00', '\u0002', '%', '\\', '=', '\r', '\n', '\0'), weight: 2 },
);
const base64 = fc.uint8Array({ maxLength: 96 }).map((b) => Buffer.from(b).toString('base64'));
const storedArb: fc.Arbitrary<AuditRecord> = fc
  .tuple(
    recordArb,
    anyString,
    anyString,
    anyString,
    anyString,
    anyString,
    fc.option(anyString, { nil: null }),
    base64,
    fc.oneof({ arbitrary: fc.uuid(), weight: 4 }, { arbitrary: anyString, weight: 1 }),
  )
  // The fields the reader makes from hex stay hex (key_id: 16 bytes), as the reader serves them.
  .map(([r, actor, actorKind, action, targetKind, targetId, meta, sig, tenant]) => ({
    ...r,
    actor,
    actor_kind: actorKind,
    action,
    target_kind: targetKind,
    target_id: targetId,
    meta,
    sig,
    tenant,
    key_id: r.hash.slice(0, 32),
  }));

const PATHS = [
  {
    name: 'cef',
    encoder: cefEncoder,
    fast: encodeCefStoredRecord,
    reference: encodeCefRecord,
    work: /[\x00\x02-\x1F\x7F%\\=\uD800-\uDFFF]/,
  },
  {
    name: 'leef',
    encoder: leefEncoder,
    fast: encodeLeefStoredRecord,
    reference: encodeLeefRecord,
    work: /[\x00\x02-\x1F\x7F%\uD800-\uDFFF]/,
  },
  // syslog: no row scan (meta always has quotes to escape); the path skips the parameter arrays.
  { name: 'syslog', encoder: syslogEncoder, fast: encodeSyslogStoredRecord, reference: encodeSyslogRecord, work: /[^\s\S]/ },
] as const;

describe('syslog fast path: hostname, procid and payload budget as the reference encoder', () => {
  it('uses the configured HOSTNAME and PROCID, the defaults, and refuses a record over the budget', () => {
    const r = baseRecord();
    const text = storedText(r);
    for (const opts of [SYSLOG_OPTS, DEVICE, { ...SYSLOG_OPTS, hostname: '-', procid: '' }])
      assert.equal(encodeSyslogStoredRecord(r, opts, text), encodeSyslogRecord(r, opts));
    const tight = { ...SYSLOG_OPTS, maxPayloadBytes: 200 };
    assert.throws(() => encodeSyslogRecord(r, tight), /max_payload_bytes/);
    assert.throws(() => encodeSyslogStoredRecord(r, tight, text), /max_payload_bytes/);
    const bad = { ...SYSLOG_OPTS, hostname: 'bad host' };
    assert.throws(() => encodeSyslogRecord(r, bad));
    assert.throws(() => encodeSyslogStoredRecord(r, bad, text));
  });
});

for (const { name, encoder, fast: fastPath, reference, work } of PATHS) {
  const same = (r: AuditRecord, opts: EncodeOptions = DEVICE): void => assert.equal(fastPath(r, opts, storedText(r)), reference(r, opts));

  describe(`${name} fast path for stored records`, () => {
    it('is the encoder of the export', () => {
      assert.equal(encoder.encodeStoredRecord, fastPath);
    });

    it('gives the reference bytes for plain, hostile and edge records', () => {
      const plain = baseRecord({ sig: Buffer.alloc(64, 7).toString('base64') });
      for (const r of [
        plain,
        hostileRecord(),
        baseRecord({ payload_hash: 'ab'.repeat(32), meta: null }),
        baseRecord({ occurred_at: 'garbage' }),
        baseRecord({ occurred_at: '2026-02-31T10:00:00.000000000Z' }),
        baseRecord({ sig: 'AAAA' }),
        baseRecord({ sig: 'AAA=' }),
        baseRecord({ sig: '' }),
        baseRecord({ tenant: HOSTILE }),
        baseRecord({ tenant: 'a\u0001b' }),
        ...['\r', '\n', '\0', '%', '\\', '|', '=', '😀', '\uD83D', '\uDE00', '\x7f', '\u0002'].flatMap((c) => [
          baseRecord({ actor: `user:${c}` }),
          baseRecord({ action: `agent.${c}` }),
          baseRecord({ target_id: c }),
          baseRecord({ meta: `{"x":"${c}"}` }),
        ]),
      ]) {
        same(r);
      }
    });

    it('memoises headers per device identity: a hostile device, then another action', () => {
      const device: EncodeOptions = { device: { vendor: 'v|e\\n%', product: 'p\r\n', version: '1=2|' } };
      same(baseRecord(), device);
      same(baseRecord({ action: 'agent.delete' }), device);
      same(baseRecord({ action: 'agent.delete' }));
    });

    it('falls back to the reference encoder without the row text', () => {
      const r = hostileRecord();
      assert.equal(fastPath(r, DEVICE, undefined), reference(r, DEVICE));
    });

    it('property: fast path = reference encoder, byte for byte', () => {
      let fast = 0;
      fc.assert(
        fc.property(storedArb, (r) => {
          const text = storedText(r);
          if (text !== undefined && !work.test(text + r.tenant)) fast++;
          same(r);
        }),
        { numRuns: 3000 },
      );
      // The arbitrary must exercise the fast path itself, not only the fallback.
      assert.ok(fast > 100, `only ${fast} clean records`);
    });
  });
}

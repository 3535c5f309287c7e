import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { hostname as osHostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { cefEncoder } from '../../src/encoders/cef.js';
import { leefEncoder } from '../../src/encoders/leef.js';
import { pctC0Decode } from '../../src/encoders/pct-c0.js';
import {
  SyslogConfigError, SyslogPayloadTooLargeError, octetCountingFrame, syslogCefEncoder, syslogEncoder, syslogHostname,
  syslogLeefEncoder, syslogTimestamp, type SyslogEncodeOptions,
} from '../../src/encoders/syslog.js';
import type { AuditRecord } from '../../src/ledger/record.js';
import { assertGolden } from './fixtures/golden.js';
import {
  SYSLOG_OPTS,
  baseRecord,
  carriedValues,
  eventArb,
  hostileEvent,
  hostileRecord,
  recordArb,
  timelessEvent,
} from './fixtures/records.js';
import { parseSyslog } from './fixtures/text-parse.js';
import { OPENSSL, RSYSLOGD, missing, startRsyslog, type RsyslogReceiver } from './fixtures/tools.js';

// nsyslog-parser 0.10.1 is CommonJS: function(line) → {prival, facility, level, version, ts, host, appName, pid, messageid, structuredData,
// message}.
const nsyslog = createRequire(import.meta.url)('nsyslog-parser') as (line: string) => Record<string, unknown>;
const ev = syslogEncoder.encodeEvent;

/** Every SD-PARAM of our element, pct-c0-decoded. */
function sdValues(params: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  return Object.fromEntries(params.filter(([k]) => k !== 'wire_enc').map(([k, v]) => [k, pctC0Decode(v)]));
}

describe('syslog encoder (RFC 5424)', () => {
  it('matches the golden records (native plain/hostile, events, CEF and LEEF frames)', () => {
    assertGolden('syslog.txt', [
      syslogEncoder.encodeRecord(baseRecord(), SYSLOG_OPTS),
      syslogEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS),
      ev(hostileEvent(), SYSLOG_OPTS),
      ev(timelessEvent(), SYSLOG_OPTS),
      syslogCefEncoder.encodeRecord(baseRecord(), SYSLOG_OPTS),
      syslogLeefEncoder.encodeRecord(baseRecord(), SYSLOG_OPTS),
    ]);
  });

  it('writes PRI from local0 + severity, 6-digit time, APP-NAME svc, MSGID audit, SD-ID svc@32473', () => {
    const p = parseSyslog(syslogEncoder.encodeRecord(baseRecord(), SYSLOG_OPTS));
    assert.deepEqual(
      [p.pri, p.version, p.timestamp, p.hostname, p.appName, p.procid, p.msgid],
      [134, '1', '2026-06-02T10:00:00.123456Z', 'siem-test.example', 'svc', '4242', 'audit'],
    );
    assert.equal(p.sd[0]?.id, 'svc@32473');
    assert.deepEqual(p.sd[0]?.params[0], ['wire_enc', 'pct-c0-v1']);
    assert.equal(parseSyslog(syslogEncoder.encodeRecord(baseRecord({ action: 'auth.login_failed' }), SYSLOG_OPTS)).pri, 132);
    assert.equal(parseSyslog(ev(hostileEvent(), SYSLOG_OPTS)).pri, 16 * 8 + 3);
  });

  it('timestamps: truncated to 6 fractional digits, NILVALUE without a recorded time', () => {
    assert.equal(syslogTimestamp('2026-06-02T10:00:00.999999999Z'), '2026-06-02T10:00:00.999999Z');
    assert.equal(syslogTimestamp('2026-06-02T10:00:00Z'), '2026-06-02T10:00:00.000000Z');
    assert.equal(syslogTimestamp(undefined), '-');
    assert.equal(syslogTimestamp('2026-13-01T00:00:00Z'), '-');
    // rsyslog 8.2302 rejects RFC 5424 years ≥ 2100 and then misparses the whole record.
    assert.equal(syslogTimestamp('2099-12-31T23:59:59.999999999Z'), '2099-12-31T23:59:59.999999Z');
    assert.equal(syslogTimestamp('2100-01-01T00:00:00Z'), '-');
    assert.equal(syslogTimestamp('0001-01-01T00:00:00Z'), '0001-01-01T00:00:00.000000Z');
    assert.equal(parseSyslog(ev(timelessEvent(), SYSLOG_OPTS)).timestamp, '-');
  });

  it('HOSTNAME: default OS name, NILVALUE when empty, refuses what RFC 5424 cannot carry', () => {
    const os = osHostname();
    assert.equal(syslogHostname(), /^[\x21-\x7E]{1,255}$/.test(os) ? os : '-');
    assert.equal(syslogHostname(''), '-');
    for (const bad of ['has space', 'ü', 'x'.repeat(256), 'tab\t']) assert.throws(() => syslogHostname(bad), SyslogConfigError);
    assert.throws(() => syslogEncoder.encodeRecord(baseRecord(), { ...SYSLOG_OPTS, procid: 'a b' }), SyslogConfigError);
  });

  it('max_payload_bytes: measured on the complete record in UTF-8 octets; over budget is refused, never truncated', () => {
    const r = baseRecord({ target_id: '😀'.repeat(50) });
    const line = syslogEncoder.encodeRecord(r, SYSLOG_OPTS);
    const size = Buffer.byteLength(line);
    assert.ok(size > line.length, 'multi-byte content');
    assert.equal(syslogEncoder.encodeRecord(r, { ...SYSLOG_OPTS, maxPayloadBytes: size }), line);
    assert.equal(syslogEncoder.encodeRecord(r, { ...SYSLOG_OPTS, maxPayloadBytes: 0 }), line);
    // Between the UTF-16 length and the octet length: a character count would wrongly accept it.
    for (const opts of [
      { ...SYSLOG_OPTS, maxPayloadBytes: size - 1 },
      { ...SYSLOG_OPTS, maxPayloadBytes: line.length + 1 },
    ] as SyslogEncodeOptions[]) {
      assert.throws(
        () => syslogEncoder.encodeRecord(r, opts),
        (e: unknown) => e instanceof SyslogPayloadTooLargeError && e.size === size && e.limit === opts.maxPayloadBytes,
      );
    }
    const framed = syslogCefEncoder.encodeRecord(r, SYSLOG_OPTS);
    assert.throws(
      () => syslogCefEncoder.encodeRecord(r, { ...SYSLOG_OPTS, maxPayloadBytes: Buffer.byteLength(framed) - 1 }),
      SyslogPayloadTooLargeError,
    );
  });

  it('octet-counting frame: MSG-LEN is the UTF-8 octet count (RFC 6587 §3.4.1)', () => {
    const line = syslogEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS);
    const frame = octetCountingFrame(line);
    const sp = frame.indexOf(0x20);
    const len = Number(frame.subarray(0, sp).toString('latin1'));
    assert.equal(len, frame.length - sp - 1);
    assert.equal(frame.subarray(sp + 1).toString('utf8'), line);
  });

  it('carries a CEF or LEEF line verbatim as MSG with NILVALUE structured data', () => {
    for (const [enc, inner] of [[syslogCefEncoder, cefEncoder], [syslogLeefEncoder, leefEncoder]] as const) {
      const p = parseSyslog(enc.encodeRecord(hostileRecord(), SYSLOG_OPTS));
      assert.deepEqual(p.sd, []);
      assert.equal(p.msg, inner.encodeRecord(hostileRecord(), SYSLOG_OPTS));
      assert.equal(p.msgid, 'audit');
    }
  });

  it('nsyslog-parser 0.10.1 reads the header fields and plain structured data', () => {
    const r = baseRecord({ meta: null });
    const n = nsyslog(syslogEncoder.encodeRecord(r, SYSLOG_OPTS));
    assert.deepEqual(
      [n.type, n.prival, n.facility, n.level, n.version, n.host, n.appName, n.pid, n.messageid, n.message],
      ['RFC5424', 134, 'local0', 'info', 1, 'siem-test.example', 'svc', '4242', 'audit', 'agent.create'],
    );
    assert.equal((n.ts as Date).toISOString(), '2026-06-02T10:00:00.123Z');
    const sd = (n.structuredData as Array<Record<string, string>>)[0] ?? {};
    assert.equal(sd.$id, 'svc@32473');
    const { $id: _id, wire_enc: wireEnc, ...rest } = sd;
    assert.equal(wireEnc, 'pct-c0-v1');
    assert.deepEqual(rest, carriedValues(r));
    // Its structured-data reader does not implement §6.3.3 escapes, so hostile records are checked on headers only.
    for (const line of [
      syslogEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS),
      syslogCefEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS),
      ev(hostileEvent(), SYSLOG_OPTS),
    ]) {
      const h = nsyslog(line);
      // It labels a frame whose MSG is CEF as type CEF; the RFC 5424 header is read either way.
      assert.ok(h.type === 'RFC5424' || (h.type === 'CEF' && line.includes(' - CEF:0|')));
      assert.deepEqual([h.version, h.host, h.appName, h.pid], [1, 'siem-test.example', 'svc', '4242']);
    }
  });

  it('property: no raw CR/LF; undoing SD escaping then pct-c0-v1 returns every original value', () => {
    fc.assert(
      fc.property(recordArb, (r) => {
        const line = syslogEncoder.encodeRecord(r, SYSLOG_OPTS);
        assert.ok(!/[\r\n]/.test(line));
        const p = parseSyslog(line);
        assert.equal(p.sd.length, 1);
        assert.deepEqual(sdValues(p.sd[0]?.params ?? []), carriedValues(r));
        assert.equal(pctC0Decode(p.msg), r.action);
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(eventArb, (e) => {
        const line = ev(e, SYSLOG_OPTS);
        assert.ok(!/[\r\n]/.test(line));
        const p = parseSyslog(line);
        const names = (p.sd[0]?.params ?? []).map(([k]) => k);
        for (const n of names) assert.ok(/^[\x21-\x7E]{1,32}$/.test(n) && !/[=\]"]/.test(n), n);
        assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length);
        assert.ok(/^[\x21-\x7E]{1,32}$/.test(p.msgid));
        assert.equal(pctC0Decode(p.msg), e.title);
      }),
      { numRuns: 300 },
    );
  });
});

describe(
  'syslog over TLS into a real rsyslog (8.2302, gtls, octet counting, mmpstrucdata)',
  { skip: missing(RSYSLOGD, 'rsyslog rsyslog-gnutls') || missing(OPENSSL, 'openssl') },
  () => {
    let rs: RsyslogReceiver;
    before(async () => {
      rs = await startRsyslog();
    });
    after(async () => {
      await rs?.stop();
    });

    it('accepts native, event and CEF/LEEF-carrying records and recovers every value', { timeout: 30_000 }, async () => {
      const records: AuditRecord[] = [baseRecord(), hostileRecord(), ...fc.sample(recordArb, { numRuns: 40, seed: 11 })];
      const lines = [
        ...records.map((r) => syslogEncoder.encodeRecord(r, SYSLOG_OPTS)),
        ev(hostileEvent(), SYSLOG_OPTS),
        syslogCefEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS),
        syslogLeefEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS),
      ];
      await rs.send(lines.map(octetCountingFrame));
      const got = await rs.received(lines.length);
      assert.equal(got.length, lines.length, 'every frame became one record');
      assert.ok(
        lines.some((l) => parseSyslog(l).timestamp === '-'),
        'the sample includes NILVALUE timestamps',
      );
      records.forEach((r, i) => {
        const g = got[i] as {
          rawmsg: string;
          pri: string;
          app: string;
          msgid: string;
          hostname: string;
          procid: string;
          version: string;
          ts: string;
          msg: string;
          all: Record<string, Record<string, Record<string, string>>>;
        };
        assert.equal(g.rawmsg, lines[i], `record ${i} arrived byte-exact`);
        assert.deepEqual(
          [g.pri, g.version, g.app, g.msgid, g.hostname, g.procid],
          ['134', '1', 'svc', 'audit', 'siem-test.example', '4242'].map((v, k) =>
            k === 0 ? String(parseSyslog(lines[i] as string).pri) : v,
          ),
        );
        const ts = parseSyslog(lines[i] as string).timestamp;
        if (ts !== '-') assert.equal(g.ts, ts);
        const sd = g.all['rfc5424-sd']?.['svc@32473'] ?? {};
        assert.equal(sd.wire_enc, 'pct-c0-v1');
        assert.deepEqual(sdValues(Object.entries(sd)), carriedValues(r));
        assert.equal(pctC0Decode(g.msg), r.action);
      });
      const [evRec, cefRec, leefRec] = got.slice(records.length) as Array<{
        msg: string;
        msgid: string;
        all: Record<string, Record<string, Record<string, string>>>;
      }>;
      assert.equal(pctC0Decode(evRec?.msg ?? ''), hostileEvent().title);
      assert.equal(evRec?.all['rfc5424-sd']?.['svc@32473']?.olvId, undefined);
      assert.equal(cefRec?.msg, cefEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS));
      assert.equal(leefRec?.msg, leefEncoder.encodeRecord(hostileRecord(), SYSLOG_OPTS));
    });
  },
);

/**
 * The export pipeline against real stores (SQLite file, Postgres with RLS) and the real export
 * worker pool: order, every format, terminator lines, seq ranges, filters, early stop.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encoderFor, acceptedTokens } from '../../../src/encoders/registry.js';
import { ledgerDevice } from '../../../src/encoders/ledger-fields.js';
import type { AuditRecord } from '../../../src/ledger/record.js';
import { AuditExporter, exportSourceFor } from '../../../src/core/audit-export/exporter.js';
import { exportChunks, terminatorLine, type ExportOutcome, type ExportPlan } from '../../../src/core/audit-export/export-stream.js';
import type { ExportFilter } from '../../../src/workers/export-protocol.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { fillLedger, OTHER_TENANT, TENANT } from './fixtures.js';

const VERSION = '9.9.9-test';
const N = 1500;

function plan(format: string, over: Partial<ExportPlan> = {}): ExportPlan {
  return { tenant: TENANT, format, json: encoderFor('ledger_export', format).json, filter: {}, fromSeq: 1, toSeq: N, ...over };
}

async function collect(iter: AsyncIterable<Uint8Array>): Promise<{ text: string; chunks: number }> {
  const parts: Buffer[] = [];
  for await (const c of iter) parts.push(Buffer.from(c));
  return { text: Buffer.concat(parts).toString('utf8'), chunks: parts.length };
}

/** The lines the main thread would produce for the same records: the worker path must match them byte for byte. */
function expected(format: string, records: readonly AuditRecord[]): string {
  const enc = encoderFor('ledger_export', format);
  return records.map((r) => `${enc.encodeRecord(r, { device: ledgerDevice(VERSION) })}\n`).join('');
}

function matches(r: AuditRecord, f: ExportFilter): boolean {
  return (
    (f.action === undefined || r.action.startsWith(f.action)) &&
    (f.actor === undefined || r.actor === f.actor) &&
    (f.target_kind === undefined || r.target_kind === f.target_kind) &&
    (f.target_id === undefined || r.target_id === f.target_id) &&
    (f.since === undefined || r.occurred_at >= f.since) &&
    (f.until === undefined || r.occurred_at < f.until)
  );
}

for (const b of await testStores()) {
  describe(`${b.backend}: audit export stream`, { skip: b.skip }, () => {
    let ts: TestStore;
    let records: AuditRecord[];
    let exporter: AuditExporter;

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      records = await fillLedger(ts.store, TENANT, N);
      // Another tenant's chain in the same tables: never part of TENANT's export.
      await fillLedger(ts.store, OTHER_TENANT, 300);
      exporter = new AuditExporter({ source: exportSourceFor(ts.config), version: VERSION, threads: 2, pageSize: 200 });
    });

    after(async () => {
      await exporter?.close();
      await ts?.dispose();
    });

    test('cef: every record in seq order, byte-identical to in-thread encoding, then the text terminator', async () => {
      const outcomes: ExportOutcome[] = [];
      const { text, chunks } = await collect(exportChunks(plan('cef'), exporter.runner(), async (o) => void outcomes.push(o)));
      assert.equal(text, expected('cef', records) + `# export-complete count=${N} last_seq=${N}\n`);
      // Large writes: one chunk per page (8 pages of 200) plus the terminator, never one per line.
      assert.equal(chunks, Math.ceil(N / 200) + 1);
      assert.equal(outcomes.length, 1);
      assert.equal(outcomes[0]?.complete, true);
      assert.equal(outcomes[0]?.count, N);
      assert.equal(outcomes[0]?.lastSeq, N);
      assert.ok(!text.includes(OTHER_TENANT));
    });

    test('every ledger-export format: one record per line, JSON lines parse, terminator per family', async () => {
      for (const format of acceptedTokens('ledger_export')) {
        const { text } = await collect(exportChunks(plan(format, { toSeq: 450 }), exporter.runner(), async () => {}));
        const lines = text.split('\n');
        assert.equal(lines.pop(), '', `${format}: ends with a newline`);
        assert.equal(lines.length, 451, format);
        assert.equal(lines.slice(0, 450).join('\n') + '\n', expected(format, records.slice(0, 450)), format);
        const last = lines[450] as string;
        if (encoderFor('ledger_export', format).json) {
          for (const l of lines) assert.equal(typeof JSON.parse(l), 'object', `${format}: ${l.slice(0, 80)}`);
          assert.deepEqual(JSON.parse(last), { export_complete: true, count: 450, last_seq: 450 }, format);
          // OTLP rule 3: the marker is skipped structurally, it has no resourceLogs.
          if (format.startsWith('otlp') && format !== 'otlp_log_record') {
            assert.equal(lines.filter((l) => 'resourceLogs' in (JSON.parse(l) as object)).length, 450, format);
          }
        } else {
          assert.equal(last, '# export-complete count=450 last_seq=450', format);
        }
      }
    });

    test('from/to select a seq range; last_seq is the end of the range', async () => {
      const { text } = await collect(exportChunks(plan('cef', { fromSeq: 777, toSeq: 1001 }), exporter.runner(), async () => {}));
      assert.equal(text, expected('cef', records.slice(776, 1001)) + terminatorLine(false, 225, 1001));
    });

    test('list filters apply inside the range; last_seq still covers the whole range', async () => {
      const filters: ExportFilter[] = [
        { action: 'agent.upd' },
        { actor: 'user:u3' },
        { target_kind: 'agent', target_id: 'agent-42' },
        { since: (records[100] as AuditRecord).occurred_at, until: (records[900] as AuditRecord).occurred_at },
        { action: 'no.such.' },
      ];
      for (const filter of filters) {
        const want = records.filter((r) => matches(r, filter));
        const { text } = await collect(exportChunks(plan('ocsf', { filter }), exporter.runner(), async () => {}));
        assert.equal(text, expected('ocsf', want) + terminatorLine(true, want.length, N), JSON.stringify(filter));
      }
    });

    test('an empty range still ends with a terminator (count 0, last_seq = from - 1)', async () => {
      const { text } = await collect(exportChunks(plan('leef', { fromSeq: N + 1, toSeq: N }), exporter.runner(), async () => {}));
      assert.equal(text, `# export-complete count=0 last_seq=${N}\n`);
    });

    test('stopping early dispatches no further page and reports an incomplete export', async () => {
      const outcomes: ExportOutcome[] = [];
      const small = new AuditExporter({ source: exportSourceFor(ts.config), version: VERSION, threads: 1, pageSize: 10, maxInFlight: 2 });
      try {
        const iter = exportChunks(plan('cef'), small.runner(), async (o) => void outcomes.push(o));
        const first = await iter.next();
        assert.equal(first.done, false);
        await iter.return();
        const o = outcomes[0] as ExportOutcome;
        assert.equal(outcomes.length, 1);
        assert.equal(o.complete, false);
        // 150 pages exist; only the first one and the bounded window were ever started.
        assert.ok(o.pagesDispatched <= o.pagesWritten + 2, JSON.stringify(o));
        assert.equal(o.count, 10);
        assert.equal(o.lastSeq, 10);
      } finally {
        await small.close();
      }
    });

    test('a failing finish hook withholds the terminator (an unrecorded export never looks complete)', async () => {
      const iter = exportChunks(plan('cef', { toSeq: 20 }), exporter.runner(), async () => {
        throw new Error('ledger unavailable');
      });
      const parts: string[] = [];
      await assert.rejects(async () => {
        for await (const c of iter) parts.push(Buffer.from(c).toString('utf8'));
      }, /ledger unavailable/);
      assert.equal(parts.join(''), expected('cef', records.slice(0, 20)));
    });
  });
}

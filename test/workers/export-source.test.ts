/**
 * The export reader (export-source.ts `each`, export-iterator.ts `sqliteStoredRowIterator`): a row read
 * as one string built in SQL must give exactly the record the per-column reader gives (`read`), for
 * hostile values (U+0001, the separator, included), erased meta, payload hashes, gaps and filters;
 * and the CEF line the export writes from it must be the reference encoder's.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeCefRecord, encodeCefStoredRecord } from '../../src/encoders/cef.js';
import { sealBatch } from '../../src/ledger/chain.js';
import { insertRecords } from '../../src/ledger/ledger-store.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import { openReader, type LedgerReader } from '../../src/workers/export-source.js';
import type { ExportFilter } from '../../src/workers/export-protocol.js';
import { createSqliteTestStore, type TestStore } from '../helpers/stores.js';
import { newSigner, TENANT } from '../ledger/fixtures.js';

const DEVICE = { device: { vendor: 'svc', product: 'control-plane', version: '0.1.0' } };
const N = 120;
const HOSTILE = [
  '\u0001',
  'a\u0001b\u0001c',
  '\u0002',
  '\r\n',
  '\0',
  '%',
  '%25',
  '\\',
  '|',
  '=',
  '"',
  '😀',
  '\uD800',
  'x\uDFFF',
  '\x7f',
  'é\t',
];

function draftAt(seq: number): AuditDraft {
  const h = HOSTILE[seq % HOSTILE.length] as string;
  if (seq % 4 === 1)
    return {
      actor: 'user:u1',
      actor_kind: 'user',
      action: 'agent.create',
      target_kind: 'agent',
      target_id: `agent-${seq}`,
      meta: { n: seq, note: 'ok' },
    };
  const where = seq % 5;
  return {
    actor: where === 0 ? `user:${h}` : 'user:u2',
    actor_kind: where === 1 ? h : 'user',
    action: where === 2 ? `agent.${h}` : 'agent.update',
    target_kind: where === 3 ? h : 'agent',
    target_id: where === 4 ? h : `t-${seq}`,
    // Canonical JSON refuses lone surrogates: the meta carries the rest.
    meta: { n: seq, note: /[\uD800-\uDFFF]/.test(h) && !/😀/.test(h) ? 'lone' : h },
    ...(seq % 3 === 0 ? { payload_hash: 'e3'.repeat(32) } : {}),
  };
}

describe('export reader: one string per row', () => {
  let ts: TestStore;
  let reader: LedgerReader;
  let sealed: AuditRecord[];

  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    sealed = sealBatch(null, TENANT, Array.from({ length: N }, (_, i) => draftAt(i + 1)), newSigner('ed25519'));
    await ts.store.withTenant(TENANT, (tx) => insertRecords(tx, TENANT, sealed, null));
    // Erase the meta of seq 10 (blind destroyed, commitment kept) and delete seq 50 (a gap): owner SQL.
    const chain = '(select chain from audit_heads where tenant_id = ?)';
    const pos = (seq: number) => `((${chain} << 40) | ${seq})`;
    await ts.admin.query('drop trigger audit_records_no_update');
    await ts.admin.query('drop trigger audit_records_no_delete');
    await ts.admin.query(
      `update audit_records set meta = null, meta_blind = null, meta_commitment = x'${(sealed[9] as AuditRecord).meta_commitment}' ` +
        `where pos = ${pos(10)}`,
      [TENANT],
    );
    await ts.admin.query(`delete from audit_records where pos = ${pos(50)}`, [TENANT]);
    reader = openReader({ kind: 'sqlite', file: join(ts.config.dataDir, SQLITE_FILE_NAME) });
  });
  after(async () => {
    await reader?.close();
    await ts?.dispose();
  });

  async function both(fromSeq: number, toSeq: number, filter: ExportFilter = {}) {
    const reference = await reader.read(TENANT, fromSeq, toSeq, filter);
    const got: Array<{ r: AuditRecord; text: string | undefined }> = [];
    const n = await reader.each(TENANT, fromSeq, toSeq, filter, (r, text) => void got.push({ r, text }));
    assert.equal(n, got.length);
    assert.deepEqual(
      got.map((g) => g.r),
      reference,
    );
    for (const { r, text } of got) {
      const separator = [r.actor, r.actor_kind, r.action, r.target_kind, r.target_id, r.meta ?? ''].some((t) => t.includes('\u0001'));
      assert.equal(text === undefined, separator, `seq ${r.seq}: text only for rows without U+0001`);
      assert.equal(encodeCefStoredRecord(r, DEVICE, text), encodeCefRecord(r, DEVICE), `seq ${r.seq}`);
    }
    return got;
  }

  it('reads every record as the per-column reader does (hostile values, erased meta, payload hashes, a gap)', async () => {
    const got = await both(1, N);
    assert.equal(got.length, N - 1);
    assert.ok(got.some((g) => g.text === undefined) && got.some((g) => g.text !== undefined));
    const erased = got.find((g) => g.r.seq === 10)?.r;
    assert.equal(erased?.meta, null);
    assert.equal(erased?.meta_commitment, (sealed[9] as AuditRecord).meta_commitment);
    // Every record with meta and blind: the served commitment is the sealed one (recomputed from the blind).
    for (const { r } of got)
      if (r.meta !== null && !/[\uD800-\uDFFF]/.test(JSON.stringify(sealed[r.seq - 1])))
        assert.equal(r.meta_commitment, sealed[r.seq - 1]?.meta_commitment);
    assert.equal(got.find((g) => g.r.seq === 51)?.r.prev_hash, '0'.repeat(64), 'after the gap: zeros');
    assert.equal(got.find((g) => g.r.seq === 52)?.r.prev_hash, sealed[50]?.hash);
  });

  it('pages starting mid-chain, at a separator row and after the gap carry the right prev_hash', async () => {
    for (const [a, b] of [[2, 9], [17, 33], [50, 60], [51, 51], [N, N + 10], [200, 300]] as const) await both(a, b);
  });

  it('filtered pages read the same records', async () => {
    await both(1, N, { actor: 'user:u2' });
    await both(1, N, { action: 'agent.' });
    await both(40, 90, { target_kind: 'agent' });
    await both(1, N, { actor: 'user:\u0001' });
  });
});

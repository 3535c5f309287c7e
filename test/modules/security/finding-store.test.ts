/**
 * The findings store on both backends: reports fold into one finding per natural key (occurrences,
 * seen range, tags), triage with optimistic concurrency, filtered keyset pages, collector items
 * folded exactly once past a mark, and tenant isolation (another tenant's finding is not found).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { syncCollectorFindings } from '../../../src/modules/security/collector-sync.js';
import { getFindingRow, listFindings, toFinding, triageFinding, upsertReports } from '../../../src/modules/security/finding-store.js';
import type { FindingReport } from '../../../src/modules/security/model.js';
import { nowTimestamp } from '../../../src/ledger/time.js';
import { newId } from '../../../src/store/ids.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

const T1 = '2026-06-01T10:00:00.000000000Z';
const T2 = '2026-06-02T10:00:00.000000000Z';

const report = (over: Partial<FindingReport> = {}): FindingReport => ({
  rule_id: 'dep.vuln',
  severity: 'high',
  subject_kind: 'package',
  subject_ref: 'left-pad@1.0.0',
  message: 'CVE-0000-1',
  ...over,
});

for (const b of await testStores()) {
  describe(`${b.backend}: security findings store`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    let other: string;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
      tenant = await addTenant(h.store);
      other = await addTenant(h.store);
    });
    after(async () => h?.dispose());

    it(
      'the same natural key is one finding: occurrences add, the seen range widens, tags merge; another region is another finding',
      async () => {
        const first = await upsertReports(
          h.store,
          tenant,
          'integration',
          [report({ observed_at: T2, tags: ['b'] }), report({ observed_at: T1, tags: ['a'] })],
          'user:u1',
        );
        assert.equal(first.reported.length, 1);
        const again = await upsertReports(
          h.store,
          tenant,
          'integration',
          [report({ message: 'CVE-0000-1 (still)', severity: 'critical', count: 3 })],
          'user:u1',
        );
        assert.deepEqual([again.reported.length, again.repeated], [0, 1]);
        const f = toFinding(await getFindingRow(h.store, tenant, first.reported[0]?.id as string));
        assert.deepEqual(
          [f.occurrences, f.first_seen, f.tags, f.severity, f.message, f.status, f.version],
          [5, T1, ['a', 'b'], 'critical', 'CVE-0000-1 (still)', 'open', 2],
        );
        assert.ok(f.last_seen > T2, 'a report without a time is seen now');
        assert.match(f.fingerprint, /^[0-9a-f]{16}:1$/);
        const elsewhere = await upsertReports(
          h.store,
          tenant,
          'integration',
          [report({ artifact_uri: 'package.json', region: { start_line: 4 } })],
          'user:u1',
        );
        assert.equal(elsewhere.reported.length, 1);
        assert.notEqual(elsewhere.reported[0]?.fingerprint, f.fingerprint);
      },
    );

    it(
      'triage: status and note with who; a stale version is 409; a resolved finding reported again reopens, a suppressed one stays',
      async () => {
        const [f] = (await upsertReports(h.store, tenant, 'integration', [report({ subject_ref: 'triage@1' })], 'user:u1')).reported;
        const id = f?.id as string;
        const t = await triageFinding(h.store, tenant, id, { status: 'resolved', note: 'patched', version: 1 }, 'user:u2');
        assert.deepEqual(
          [t.previous, t.finding.status, t.finding.status_note, t.finding.status_by, t.finding.version],
          ['open', 'resolved', 'patched', 'user:u2', 2],
        );
        await assert.rejects(triageFinding(h.store, tenant, id, { status: 'open', version: 1 }, 'user:u2'), { code: 'conflict' });
        const back = await upsertReports(h.store, tenant, 'integration', [report({ subject_ref: 'triage@1' })], 'system');
        assert.deepEqual(
          back.reported.map((x) => [x.id, x.status, x.status_by]),
          [[id, 'open', 'system']],
        );
        await triageFinding(h.store, tenant, id, { status: 'suppressed', note: 'accepted risk' }, 'user:u2');
        const quiet = await upsertReports(h.store, tenant, 'integration', [report({ subject_ref: 'triage@1' })], 'system');
        assert.deepEqual([quiet.reported.length, quiet.repeated], [0, 1]);
        assert.equal(toFinding(await getFindingRow(h.store, tenant, id)).status, 'suppressed');
      },
    );

    it('pages under filters with an opaque cursor; another tenant sees nothing and cannot address a finding', async () => {
      const t = await addTenant(h.store);
      await upsertReports(
        h.store,
        t,
        'integration',
        Array.from({ length: 5 }, (_, i) => report({ subject_ref: `p${i}`, severity: i % 2 === 0 ? 'low' : 'high' })),
        'user:u1',
      );
      const p1 = await listFindings(h.store, t, { severity: 'low', limit: 2 });
      assert.equal(p1.items.length, 2);
      assert.equal(p1.has_more, true);
      const p2 = await listFindings(h.store, t, { severity: 'low', limit: 2, cursor: p1.cursor as string });
      assert.deepEqual([...p1.items, ...p2.items].map((x) => x.subject_ref), ['p0', 'p2', 'p4']);
      assert.equal(p2.has_more, false);
      await assert.rejects(listFindings(h.store, t, { limit: 2, cursor: 'bm9wZQ' }), { code: 'bad_request' });
      assert.deepEqual((await listFindings(h.store, other, { limit: 100 })).items, []);
      await assert.rejects(getFindingRow(h.store, other, p1.items[0]?.id as string), { code: 'not_found' });
      await assert.rejects(triageFinding(h.store, other, p1.items[0]?.id as string, { status: 'resolved' }, 'user:x'), {
        code: 'not_found',
      });
    });

    it('collector items fold once past the mark, deduplicated by natural key, linked to their ingest.batch record', async () => {
      const t = await addTenant(h.store);
      const batch = newId();
      const now = nowTimestamp();
      const body = (rule: string, subject: string) =>
        JSON.stringify({ message: 'seen', observed_at: T1, rule, severity: 'medium', subject });
      await h.store.withTenant(t, async (tx) => {
        await tx
          .insertInto('ingest_batches')
          .values({
            tenant_id: t,
            batch_id: batch,
            collector: 'edge-1',
            accepted: 3,
            rejected: '[]',
            payload_hash: 'ab'.repeat(32),
            head_seq: 0,
            ledger_seq: 4,
            created_at: now,
          })
          .execute();
        await tx
          .insertInto('ingest_items')
          .values([
            {
              id: newId(),
              tenant_id: t,
              batch_id: batch,
              kind: 'finding',
              body: body('secret-in-prompt', 'build-bot'),
              observed_at: T1,
              created_at: now,
            },
            {
              id: newId(),
              tenant_id: t,
              batch_id: batch,
              kind: 'finding',
              body: body('secret-in-prompt', 'build-bot'),
              observed_at: T1,
              created_at: now,
            },
            { id: newId(), tenant_id: t, batch_id: batch, kind: 'cost', body: '{}', observed_at: T1, created_at: now },
            {
              id: newId(),
              tenant_id: t,
              batch_id: batch,
              kind: 'finding',
              body: body('prompt-injection', 'docs-bot'),
              observed_at: T1,
              created_at: now,
            },
          ])
          .execute();
      });
      // Items younger than the settle time wait for a later run.
      assert.equal((await syncCollectorFindings(h.store, t)).items, 0);
      const later = Date.now() + 10_000;
      const first = await syncCollectorFindings(h.store, t, later);
      assert.deepEqual([first.items, first.reported.length, first.repeated], [3, 2, 0]);
      assert.equal((await syncCollectorFindings(h.store, t, later)).items, 0, 'nothing is folded twice');
      const page = await listFindings(h.store, t, { source: 'collector', limit: 10 });
      const secret = page.items.find((x) => x.rule_id === 'secret-in-prompt');
      assert.deepEqual(
        [secret?.occurrences, secret?.tags, secret?.ledger_refs, secret?.subject_kind],
        [2, ['collector:edge-1'], [{ tenant: t, seq: 4, action: 'ingest.batch' }], 'subject'],
      );
      assert.deepEqual((await listFindings(h.store, other, { source: 'collector', limit: 10 })).items, []);
    });
  });
}

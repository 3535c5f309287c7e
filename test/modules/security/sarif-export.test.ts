/**
 * The SARIF export's passes on the audit export's threads (sarif-worker.ts, their own read-only
 * connections) against the same passes on the server's store, on both backends, with pages of two
 * findings so every page boundary is crossed: the same bytes, the cap cut inside a page, a refused
 * result never emitted yet counted, another tenant's findings never read, and a consumer that stops
 * reading leaves the pool usable.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditExporter, exportSourceFor } from '../../../src/core/audit-export/exporter.js';
import { upsertReports } from '../../../src/modules/security/finding-store.js';
import type { FindingReport } from '../../../src/modules/security/model.js';
import {
  countExport,
  sarifChunks,
  sarifRunner,
  type ExportPlan,
  type ExportOutcome,
  type SarifRunner,
} from '../../../src/modules/security/sarif-export.js';
import { sarifSchemaErrors } from '../../helpers/sarif.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

type Log = {
  runs: Array<{
    results: Array<{ guid: string; ruleId: string; partialFingerprints: { primaryLocationLineHash: string } }>;
    tool: { driver: { rules: Array<{ id: string }> } };
    invocations: Array<{ properties: Record<string, unknown>; toolExecutionNotifications: Array<{ message: { text: string } }> }>;
  }>;
};

const report = (i: number): FindingReport => ({
  rule_id: i % 3 === 0 ? 'secret.leak' : 'dep.vuln',
  severity: (['low', 'medium', 'high', 'critical'] as const)[i % 4] as 'low',
  subject_kind: 'package',
  subject_ref: `pkg-${i} «ü»`,
  message: `finding ${i}`,
  ...(i % 2 === 0 ? { artifact_uri: `src/a b/${i}.ts`, region: { start_line: i + 1 } } : {}),
});

async function exportText(
  runner: SarifRunner,
  plan: ExportPlan,
): Promise<{ text: string; outcome: ExportOutcome; count: Awaited<ReturnType<typeof countExport>> }> {
  const count = await countExport(runner, plan);
  let outcome: ExportOutcome | undefined;
  const parts: Buffer[] = [];
  for await (const c of sarifChunks(runner, plan, count, { 'svc.tenant': plan.tenant }, async (o) => void (outcome = o)))
    parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c));
  const text = Buffer.concat(parts).toString('utf8');
  assert.equal(outcome?.bytes, Buffer.byteLength(text), 'the audited byte count is the body');
  return { text, outcome: outcome as ExportOutcome, count };
}

for (const b of await testStores()) {
  describe(`${b.backend}: SARIF export on the export threads`, { skip: b.skip }, () => {
    let h: TestStore;
    let exporter: AuditExporter;
    let tenant: string;
    let other: string;
    let ids: string[] = [];
    let pool: SarifRunner;
    let local: SarifRunner;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
      tenant = await addTenant(h.store);
      other = await addTenant(h.store);
      const out = await upsertReports(h.store, tenant, 'integration', Array.from({ length: 9 }, (_, i) => report(i)), 'tester');
      ids = [...out.ids.values()].sort();
      await upsertReports(h.store, other, 'integration', [{ ...report(1), rule_id: 'other.tenant' }], 'tester');
      // A corrupt severity, as a hand edit would leave it: refused, never emitted.
      const q =
        b.backend === 'postgres'
          ? `update security_findings set severity = 'severe' where id = $1`
          : `update security_findings set severity = 'severe' where id = ?`;
      await h.admin.query(q, [ids[1]]);
      exporter = new AuditExporter({ source: exportSourceFor(h.config), version: '1.0.0', threads: 2 });
      pool = sarifRunner({ store: h.store, auditExport: exporter });
      local = sarifRunner({ store: h.store });
    });
    after(async () => {
      await exporter?.close();
      await h?.dispose();
    });

    it(
      'pages of two on the threads give the same bytes as the passes on the store; a refused result is counted, never emitted',
      async () => {
        const plan: ExportPlan = { tenant, filter: {}, cap: 100, toolVersion: '1.0.0', pageSize: 2 };
        const threaded = await exportText(pool, plan);
        const inline = await exportText(local, plan);
        assert.equal(threaded.text, inline.text);
        assert.deepEqual(threaded.count.bounds.length, 5, 'nine findings in pages of two');
        const doc = JSON.parse(threaded.text) as Log;
        assert.deepEqual(sarifSchemaErrors(doc), []);
        const run = doc.runs[0];
        assert.deepEqual(
          run?.results.map((r) => r.guid),
          ids.filter((id) => id !== ids[1]),
          'every valid finding once, in id order',
        );
        assert.deepEqual(
          [threaded.outcome.emitted, threaded.outcome.refused, threaded.count.emit, threaded.count.refused, threaded.count.truncated],
          [8, 1, 8, 1, false],
        );
        assert.match(
          run?.invocations[0]?.toolExecutionNotifications[0]?.message.text ?? '',
          new RegExp(`finding ${ids[1]} not emitted: severity "severe"`),
        );
        assert.ok(!run?.tool.driver.rules.some((r) => r.id === 'other.tenant'), "another tenant's rule is not read");
      },
    );

    it('the cap cuts inside a page: the count, the body and the truncation agree; fingerprints match an uncapped export', async () => {
      const full = JSON.parse((await exportText(pool, { tenant, filter: {}, cap: 100, toolVersion: '1.0.0', pageSize: 2 })).text) as Log;
      const capped = await exportText(pool, { tenant, filter: {}, cap: 4, toolVersion: '1.0.0', pageSize: 3 });
      const doc = JSON.parse(capped.text) as Log;
      assert.deepEqual([capped.count.emit, capped.count.truncated, capped.outcome.emitted, doc.runs[0]?.results.length], [4, true, 4, 4]);
      assert.deepEqual(doc.runs[0]?.invocations[0]?.properties, { 'svc.emitted': 4, 'svc.refused': 1, 'svc.truncated': true });
      assert.deepEqual(
        doc.runs[0]?.results.map((r) => r.partialFingerprints.primaryLocationLineHash),
        full.runs[0]?.results.slice(0, 4).map((r) => r.partialFingerprints.primaryLocationLineHash),
      );
      const filtered = JSON.parse(
        (await exportText(pool, { tenant, filter: { rule_id: 'secret.leak' }, cap: 100, toolVersion: '1.0.0', pageSize: 2 })).text,
      ) as Log;
      assert.deepEqual(new Set(filtered.runs[0]?.results.map((r) => r.ruleId)), new Set(['secret.leak']));
    });

    it("another tenant's export reads only its own finding", async () => {
      const doc = JSON.parse(
        (await exportText(pool, { tenant: other, filter: {}, cap: 100, toolVersion: '1.0.0', pageSize: 2 })).text,
      ) as Log;
      assert.deepEqual(doc.runs[0]?.results.map((r) => r.ruleId), ['other.tenant']);
    });

    it('a consumer that stops after the first page leaves the pool usable', async () => {
      const plan: ExportPlan = { tenant, filter: {}, cap: 100, toolVersion: '1.0.0', pageSize: 1 };
      const count = await countExport(pool, plan);
      let n = 0;
      for await (const _ of sarifChunks(pool, plan, count, {}, async () => undefined)) if (++n === 2) break;
      const again = await exportText(pool, { ...plan, pageSize: 2 });
      assert.equal(again.outcome.emitted, 8);
    });
  });
}

/**
 * The security module over HTTPS against the real `svc serve`, on SQLite and on Postgres:
 * permissions (viewer reads findings but not evidence; writes need editor), every mutation audited,
 * bad input answered with the error envelope, tenant isolation (404), and the SARIF export: headers
 * (count, truncation at the cap), schema-valid (ajv 2020-12) and multitool-clean, a refused result
 * never emitted, fingerprints identical across two exports and across a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { call, startServer, type TestServer } from '../../helpers/server.js';
import { createTempDatabase, pgQuery, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';
import { multitoolErrors, multitoolSkip, sarifSchemaErrors } from '../../helpers/sarif.js';

const pg = await pgTestDsn();
const backends: Array<{ name: 'sqlite' | 'postgres'; skip: string | undefined }> = [
  { name: 'sqlite', skip: undefined },
  { name: 'postgres', skip: pg.skip },
];

type Sarif = {
  version: string;
  runs: Array<{
    results: Array<{ guid: string; ruleId: string; partialFingerprints: { primaryLocationLineHash: string } }>;
    tool: { driver: { rules: Array<{ id: string }> } };
  }>;
};

for (const backend of backends) {
  describe(`${backend.name}: security findings over HTTPS`, { skip: backend.skip }, () => {
    let server: TestServer;
    let dataDir: string;
    let db: TempDatabase | undefined;
    let args: string[];
    const env = { SERVICE_FINDINGS_EXPORT_CAP: '3', SERVICE_FINDINGS_EVALUATE_INTERVAL_S: '0' };
    let owner: string;
    let viewer: string;
    let editor: string;
    let tenant: string;
    let otherTenant: string;

    const send = (token: string, method: string, p: string, body?: unknown, tenantId = tenant, raw?: string) =>
      call(server, method, p, {
        headers: {
          authorization: `Bearer ${token}`,
          'x-service-tenant': tenantId,
          ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const auditCount = async (action: string): Promise<number> => {
      const res = await send(owner, 'GET', `/v1/audit?action=${encodeURIComponent(action)}&limit=1000`);
      assert.equal(res.status, 200, res.text);
      return (res.json().items as Array<{ action: string }>).filter((r) => r.action === action).length;
    };
    /** Writes a corrupt severity straight into the database, as a broken migration or a hand edit would. */
    const corrupt = async (id: string): Promise<void> => {
      if (db) return void (await pgQuery(db.dsn, `update security_findings set severity = 'severe' where id = $1`, [id]));
      const sqlite = new BetterSqlite3(path.join(dataDir, 'svc.db'), { timeout: 5000 });
      try {
        sqlite.prepare(`update security_findings set severity = 'severe' where id = ?`).run(id);
      } finally {
        sqlite.close();
      }
    };

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'svc-sec-'));
      if (backend.name === 'postgres') db = await createTempDatabase(pg.dsn as string);
      args = db ? ['--store', 'postgres', '--dsn', db.dsn] : [];
      server = await startServer({ dataDir, args, env });
      const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
      const json = { 'content-type': 'application/json' };
      const setup = await call(server, 'POST', '/v1/setup', {
        body: JSON.stringify({ token, email: 'owner@example.test', password: 'owner password 123', organization: 'Acme' }),
        headers: json,
      });
      assert.equal(setup.status, 201, setup.text);
      tenant = setup.json().organization.id;
      owner = (
        await call(server, 'POST', '/v1/auth/login', {
          body: JSON.stringify({ email: 'owner@example.test', password: 'owner password 123' }),
          headers: json,
        })
      ).json().token;
      const issue = async (role: string) => (await send(owner, 'POST', '/v1/tokens', { name: role, role, tenant })).json().token as string;
      viewer = await issue('viewer');
      editor = await issue('editor');
      otherTenant = (await send(owner, 'POST', '/v1/system/orgs', { name: 'Other' })).json().id;
    });
    after(async () => {
      await server?.stop();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    let ids: string[] = [];

    it('reports: editor 200 (audited, deduplicated), viewer 403; bad input is a 400 envelope', async () => {
      const findings = Array.from({ length: 5 }, (_, i) => ({
        rule_id: i < 3 ? 'dep.vuln' : 'secret.leak',
        severity: (['low', 'medium', 'high', 'critical', 'info'] as const)[i],
        subject_kind: 'package',
        subject_ref: `pkg-${i}`,
        message: `problem ${i}`,
        ...(i === 0 ? { artifact_uri: 'package-lock.json', region: { start_line: 10, end_line: 12 } } : {}),
      }));
      assert.equal((await send(viewer, 'POST', '/v1/m/security/findings', { findings })).status, 403);
      const res = await send(editor, 'POST', '/v1/m/security/findings', { findings: [...findings, findings[1]] });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json().accepted, res.json().reported, res.json().repeated], [6, 5, 0]);
      ids = res.json().ids.slice(0, 5);
      assert.equal(res.json().ids[5], ids[1], 'the repeated report is the same finding');
      assert.equal(await auditCount('security.findings.report'), 1);
      const bad: Array<[string, string | undefined, unknown]> = [
        ['malformed JSON', '{"findings": [', undefined],
        ['unknown field', undefined, { findings: [{ ...findings[0], colour: 'red' }] }],
        ['wrong type', undefined, { findings: [{ ...findings[0], severity: 3 }] }],
        ['severity outside the mapping', undefined, { findings: [{ ...findings[0], severity: 'severe' }] }],
        ['NUL in a rule id', undefined, { findings: [{ ...findings[0], rule_id: 'a\u0000b' }] }],
        ['empty rule id', undefined, { findings: [{ ...findings[0], rule_id: '' }] }],
        ['region ends before it starts', undefined, { findings: [{ ...findings[0], region: { start_line: 5, end_line: 2 } }] }],
        ['no findings', undefined, { findings: [] }],
      ];
      for (const [what, raw, body] of bad) {
        const r = await send(editor, 'POST', '/v1/m/security/findings', body, tenant, raw);
        assert.deepEqual([r.status, r.json().error.code], [400, 'bad_request'], what);
      }
    });

    it(
      'reads: viewer lists and gets; evidence is a privileged read (viewer 403, editor 200 and audited); another tenant gets 404',
      async () => {
        const list = await send(viewer, 'GET', '/v1/m/security/findings?rule_id=dep.vuln&limit=2');
        assert.equal(list.status, 200, list.text);
        assert.deepEqual([list.json().items.length, list.json().has_more], [2, true]);
        const next = await send(viewer, 'GET', `/v1/m/security/findings?rule_id=dep.vuln&limit=2&cursor=${list.json().cursor}`);
        assert.deepEqual(
          next.json().items.map((f: { subject_ref: string }) => f.subject_ref),
          ['pkg-2'],
        );
        const one = await send(viewer, 'GET', `/v1/m/security/findings/${ids[0]}`);
        assert.deepEqual(
          [one.json().artifact_uri, one.json().region, one.json().status, one.json().source],
          ['package-lock.json', { start_line: 10, end_line: 12 }, 'open', 'integration'],
        );
        assert.equal((await send(viewer, 'GET', `/v1/m/security/findings/${ids[0]}/evidence`)).status, 403);
        const before = await auditCount('security.finding.evidence.read');
        assert.equal((await send(editor, 'GET', `/v1/m/security/findings/${ids[0]}/evidence`)).status, 200);
        assert.equal(await auditCount('security.finding.evidence.read'), before + 1);
        assert.equal((await send(owner, 'GET', `/v1/m/security/findings/${ids[0]}`, undefined, otherTenant)).status, 404);
        assert.deepEqual((await send(owner, 'GET', '/v1/m/security/findings', undefined, otherTenant)).json().items, []);
        assert.equal((await send(viewer, 'GET', '/v1/m/security/findings?status=closed')).status, 400);
        assert.equal((await send(viewer, 'GET', '/v1/m/security/findings/not-a-uuid')).status, 400);
      },
    );

    it('triage: editor sets status and note (audited); viewer 403; stale version 409; another tenant 404', async () => {
      assert.equal((await send(viewer, 'PATCH', `/v1/m/security/findings/${ids[4]}`, { status: 'acknowledged' })).status, 403);
      const t = await send(editor, 'PATCH', `/v1/m/security/findings/${ids[4]}`, {
        status: 'suppressed',
        note: 'test fixture',
        version: 1,
      });
      assert.equal(t.status, 200, t.text);
      assert.deepEqual(
        [t.json().status, t.json().status_note, t.json().status_by.startsWith('token:'), t.json().version],
        ['suppressed', 'test fixture', true, 2],
      );
      assert.equal((await send(editor, 'PATCH', `/v1/m/security/findings/${ids[4]}`, { status: 'open', version: 1 })).status, 409);
      assert.equal((await send(owner, 'PATCH', `/v1/m/security/findings/${ids[4]}`, { status: 'open' }, otherTenant)).status, 404);
      assert.equal((await send(editor, 'PATCH', `/v1/m/security/findings/${ids[4]}`, { status: 'gone' })).status, 400);
      assert.equal(await auditCount('security.finding.triage'), 1);
      // Every committed change of these requests had its own audit record (no recovery record needed).
      assert.deepEqual(server.logs().filter((l) => /had no audit record/.test(l.msg)), []);
    });

    const exportSarif = async (query = '') => {
      const res = await send(viewer, 'GET', `/v1/m/security/findings/export${query}`);
      assert.equal(res.status, 200, res.text);
      return { res, doc: res.json() as Sarif };
    };
    const fingerprints = (doc: Sarif) =>
      Object.fromEntries(doc.runs[0]?.results.map((r) => [r.guid, r.partialFingerprints.primaryLocationLineHash]) ?? []);
    let firstPrints: Record<string, string> = {};

    it(
      'SARIF export: content type, result count and truncation headers at the cap, refused result never emitted, valid for ajv and the ' +
        'multitool',
      async () => {
        await corrupt(ids[2] as string);
        const { res, doc } = await exportSarif('?format=sarif');
        assert.equal(res.headers['content-type'], 'application/sarif+json');
        assert.deepEqual(
          [res.headers['x-service-result-count'], res.headers['x-service-truncated'], res.headers['x-service-refused-count']],
          ['3', 'true', '1'],
        );
        assert.equal(doc.runs[0]?.results.length, 3);
        assert.ok(!doc.runs[0]?.results.some((r) => r.guid === ids[2]), 'the refused finding is not a result');
        assert.deepEqual(sarifSchemaErrors(doc), []);
        // Under the cap: no truncation header; filters are the list's.
        const narrow = await exportSarif('?rule_id=secret.leak');
        assert.deepEqual([narrow.res.headers['x-service-result-count'], narrow.res.headers['x-service-truncated']], ['2', undefined]);
        assert.deepEqual(
          narrow.doc.runs[0]?.tool.driver.rules.map((r) => r.id),
          ['secret.leak'],
        );
        const small = await exportSarif('?max_results=1');
        assert.deepEqual(
          [small.res.headers['x-service-result-count'], small.res.headers['x-service-truncated'], small.doc.runs[0]?.results.length],
          ['1', 'true', 1],
        );
        const wrong = await send(viewer, 'GET', '/v1/m/security/findings/export?format=csv');
        assert.deepEqual([wrong.status, wrong.json().error.code, /sarif/.test(wrong.json().error.message)], [400, 'bad_request', true]);
        assert.ok((await auditCount('security.findings.export')) >= 3, 'each export is recorded');
        firstPrints = fingerprints((await exportSarif('?max_results=4')).doc);
        assert.deepEqual(fingerprints((await exportSarif('?max_results=4')).doc), firstPrints, 'identical across two exports');
        // Last: the multitool takes seconds, longer than the server keeps an idle connection.
        if (!multitoolSkip()) {
          const file = path.join(dataDir, 'export.sarif');
          writeFileSync(file, res.text);
          assert.deepEqual(multitoolErrors(file), []);
        }
      },
    );

    it(
      'observability: viewer reads ingestion-health (checks verified), attestation and a traced request; another tenant does not see ' +
        'the trace',
      async () => {
        const health = await send(viewer, 'GET', '/v1/m/observability/ingestion-health');
        assert.equal(health.status, 200, health.text);
        const st = Object.fromEntries(
          (health.json().standards as Array<{ standard: string; status: string; outbound: Array<{ what: string; count: number }> }>).map(
            (x) => [x.standard, x],
          ),
        );
        assert.deepEqual(
          [st['ocsf']?.status, st['siem-formats']?.status, st['genai-semconv'] ?? st['opentelemetry-genai-semconv']?.status],
          ['ok', 'ok', 'not_implemented'],
        );
        assert.ok(
          (st['siem-formats']?.outbound.find((f) => f.what.endsWith('sarif'))?.count ?? 0) >= 3,
          'the SARIF exports above are counted',
        );
        assert.equal((await send(viewer, 'GET', '/v1/m/observability/attestation')).json().release, false);
        const traceId = 'a'.repeat(31) + 'b';
        const patched = await call(server, 'PATCH', `/v1/m/security/findings/${ids[3]}`, {
          body: JSON.stringify({ status: 'acknowledged' }),
          headers: {
            authorization: `Bearer ${editor}`,
            'x-service-tenant': tenant,
            'content-type': 'application/json',
            traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
          },
        });
        assert.equal(patched.status, 200, patched.text);
        const trace = await send(viewer, 'GET', `/v1/m/observability/traces/${traceId}`);
        assert.deepEqual([trace.status, trace.json().records.map((r: { action: string }) => r.action)], [200, ['security.finding.triage']]);
        assert.equal((await send(owner, 'GET', `/v1/m/observability/traces/${traceId}`, undefined, otherTenant)).status, 404);
        assert.equal((await send(viewer, 'GET', '/v1/m/observability/traces/NOTHEX')).status, 400);
        assert.equal((await send(viewer, 'GET', '/v1/m/observability/traces?window=0')).status, 400);
      },
    );

    it('fingerprints are identical across a restart', async () => {
      await server.stop();
      server = await startServer({ dataDir, args, env });
      assert.deepEqual(fingerprints((await exportSarif('?max_results=4')).doc), firstPrints);
    });
  });
}

/**
 * `GET /v1/audit/export` through the transport-free App (real store, real export pool, real
 * encoders): defaults, content types, token errors, snapshot bound, and the `audit.export` record.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { App } from '../../../src/http/app.js';
import type { RequestContext } from '../../../src/http/context.js';
import { RecordingAuditSink } from '../../../src/ledger/audit-sink.js';
import type { Services } from '../../../src/serve/services.js';
import type { Principal } from '../../../src/auth/principal.js';
import { acceptedTokens } from '../../../src/encoders/registry.js';
import { AuditExporter, exportSourceFor } from '../../../src/core/audit-export/exporter.js';
import { auditExportRoutes, EXPORT_FROM_HEADER, EXPORT_TO_HEADER } from '../../../src/core/audit-export/routes.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { fillLedger, TENANT } from './fixtures.js';

const N = 300;

const principal: Principal = {
  kind: 'user', userId: 'u-1', actor: 'user:u-1', actorKind: 'user', credentialId: 's-1', superadmin: false, aal: 1,
  aalExpiresAt: null, amr: ['pwd'], boundTenant: null, roleCeiling: null, grants: [{ tenant: TENANT, role: 'viewer' }], expiresAt: null,
};

for (const b of await testStores()) {
  describe(`${b.backend}: GET /v1/audit/export`, { skip: b.skip }, () => {
    let ts: TestStore;
    let exporter: AuditExporter;
    let sink: RecordingAuditSink;
    let app: App;
    let withTenant = true;

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      await fillLedger(ts.store, TENANT, N);
      exporter = new AuditExporter({ source: exportSourceFor(ts.config), version: '1.2.3', threads: 1, pageSize: 64 });
      sink = new RecordingAuditSink();
      const services = { store: ts.store, audit: sink, auditExport: exporter } as unknown as Services;
      // The identity area's authenticator sets these two; here a fixed viewer of TENANT.
      const authenticate = async (ctx: RequestContext) => {
        const c = ctx as { principal?: Principal; tenant?: string };
        c.principal = principal;
        if (withTenant) c.tenant = TENANT;
      };
      app = new App({
        routes: auditExportRoutes,
        services,
        log: pino({ level: 'silent' }),
        tls: true,
        bodyLimit: 1024,
        timeoutMs: 5000,
        setupRequired: () => false,
        authenticate,
      });
    });

    after(async () => {
      await exporter?.close();
      await ts?.dispose();
    });

    test('default format is cef as text/plain, with the snapshot range headers and the text terminator', async () => {
      sink.appended.length = 0;
      const res = await app.request('GET', '/v1/audit/export');
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers[EXPORT_FROM_HEADER], '1');
      assert.equal(res.headers[EXPORT_TO_HEADER], String(N));
      const lines = res.text.split('\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines.length, N + 1);
      assert.ok(lines.slice(0, N).every((l) => l.startsWith('CEF:0|svc|control-plane|1.2.3|')));
      assert.equal(lines[N], `# export-complete count=${N} last_seq=${N}`);
      // DECISIONS.md: then an audit.export record is appended, on the exported tenant's chain.
      assert.equal(sink.appended.length, 1);
      const { tenant, draft } = sink.appended[0] as (typeof sink.appended)[number];
      assert.equal(tenant, TENANT);
      assert.equal(draft.action, 'audit.export');
      assert.equal(draft.actor, 'user:u-1');
      assert.equal(draft.actor_kind, 'user');
      assert.deepEqual(
        { ...draft.meta, request_id: undefined },
        {
          format: 'cef',
          from: 1,
          to: N,
          filter: {},
          complete: true,
          count: N,
          last_seq: N,
          bytes: Buffer.byteLength(res.text) - lines[N]!.length - 1,
          request_id: undefined,
        },
      );
    });

    test('JSON formats are application/x-ndjson and end with the export_complete object', async () => {
      for (const format of ['otlp', 'otlp_envelope', 'otlp_log_record', 'ocsf']) {
        const res = await app.request('GET', `/v1/audit/export?format=${format}&from=11&to=20`);
        assert.equal(res.status, 200, format);
        assert.equal(res.headers['content-type'], 'application/x-ndjson', format);
        const lines = res.text.trimEnd().split('\n');
        assert.equal(lines.length, 11, format);
        assert.deepEqual(JSON.parse(lines[10] as string), { export_complete: true, count: 10, last_seq: 20 }, format);
      }
      for (const format of ['leef', 'syslog']) {
        const res = await app.request('GET', `/v1/audit/export?format=${format}&to=5`);
        assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8', format);
        assert.ok(res.text.endsWith('# export-complete count=5 last_seq=5\n'), format);
      }
    });

    test('a token outside the ledger-export list is 400 naming every accepted token (no JSON passthrough)', async () => {
      for (const bad of ['json', 'CEF', 'asim', '']) {
        const res = await app.request('GET', `/v1/audit/export?format=${encodeURIComponent(bad)}`);
        assert.equal(res.status, 400, bad);
        const body = res.json() as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'bad_request');
        for (const t of acceptedTokens('ledger_export')) assert.ok(body.error.message.includes(t), `${bad}: ${body.error.message}`);
      }
    });

    test('bad ranges and unknown parameters are 400 before any byte is streamed', async () => {
      for (const q of ['from=0', 'to=-1', 'from=10&to=5', 'since=yesterday', 'limit=5', 'from=abc']) {
        const res = await app.request('GET', `/v1/audit/export?${q}`);
        assert.equal(res.status, 400, q);
      }
    });

    test('without a resolved tenant the export is refused', async () => {
      withTenant = false;
      try {
        const res = await app.request('GET', '/v1/audit/export');
        assert.equal(res.status, 400);
        assert.match((res.json() as { error: { message: string } }).error.message, /tenant required/);
      } finally {
        withTenant = true;
      }
    });

    test('the export is a consistent prefix: records appended while it streams are not in it', async () => {
      const res = await app.handle({
        method: 'GET',
        path: '/v1/audit/export',
        query: 'format=otlp_log_record',
        headers: {},
        body: Buffer.alloc(0),
        remoteAddress: '127.0.0.1',
      });
      assert.equal(res.status, 200);
      // The head was read when the request was answered; these land before the first page is read.
      await fillLedger(ts.store, TENANT, 50);
      let text = '';
      for await (const c of res.stream as AsyncIterable<Uint8Array>) text += Buffer.from(c).toString('utf8');
      const lines = text.trimEnd().split('\n');
      assert.equal(lines.length, N + 1);
      assert.deepEqual(JSON.parse(lines[N] as string), { export_complete: true, count: N, last_seq: N });
      const full = await app.request('GET', '/v1/audit/export?format=otlp_log_record');
      assert.equal(full.text.trimEnd().split('\n').length, N + 51);
    });
  });
}

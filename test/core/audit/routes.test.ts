/**
 * The audit routes in memory (App.request) over a real store and the real ledger. The caller is set
 * by a minimal authenticator standing in for src/auth (it resolves the tenant from the
 * X-Service-Tenant header, as the real one does), so these tests cover what the routes themselves do.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { App, type Authenticator } from '../../../src/http/app.js';
import { auditRoutes } from '../../../src/core/audit/routes.js';
import { LedgerService } from '../../../src/ledger/ledger-service.js';
import { SYSTEM_TENANT, type AuditRecord } from '../../../src/ledger/record.js';
import { publishedKeySet, type PublishedKey } from '../../../src/ledger/keyring.js';
import { verifyRecords, type VerifyReport } from '../../../src/ledger/verify.js';
import type { Services } from '../../../src/serve/services.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { TENANT, OTHER_TENANT, draft } from '../../ledger/fixtures.js';

interface Page {
  items: AuditRecord[];
  has_more: boolean;
  head_seq: number;
  head_hash: string | null;
  cursor?: string;
}

const actAs: Authenticator = async (ctx) => {
  const m = ctx as { principal?: unknown; tenant?: string };
  m.principal = { actor: 'user:0197aaaa-0000-7000-8000-000000000001', actorKind: 'user' };
  m.tenant = ctx.headers['x-service-tenant'];
};

for (const b of await testStores()) {
  describe(`${b.backend}: audit routes`, { skip: b.skip }, () => {
    let ts: TestStore;
    let ledger: LedgerService;
    let app: App;
    const get = async <T>(path: string, tenant = TENANT): Promise<{ status: number; body: T }> => {
      const res = await app.request('GET', path, { headers: { 'x-service-tenant': tenant } });
      return { status: res.status, body: res.json() as T };
    };

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      ledger = await LedgerService.open({ store: ts.store, dataDir: ts.config.dataDir, threads: 1, checkpointIntervalMs: 0, env: {} });
      const services = { store: ts.store, audit: ledger.sink, ledger } as unknown as Services;
      app = new App({
        routes: auditRoutes,
        services,
        log: pino({ level: 'silent' }),
        tls: true,
        bodyLimit: 1 << 20,
        timeoutMs: 10_000,
        setupRequired: () => false,
        authenticate: actAs,
        validateResponses: true,
      });
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          ledger.append(TENANT, draft(i, i % 5 === 0 ? { action: 'token.create', target_kind: 'token' } : {})),
        ),
      );
      await ledger.append(SYSTEM_TENANT, draft(100, { action: 'auth.login' }));
    });
    after(async () => {
      await ledger?.close();
      await ts?.dispose();
    });

    test('GET /v1/audit pages ascending by seq with a cursor, and every read is itself recorded', async () => {
      const p1 = await get<Page>('/v1/audit?limit=10');
      assert.equal(p1.status, 200);
      assert.deepEqual(p1.body.items.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.equal(p1.body.has_more, true);
      assert.equal(p1.body.head_seq, 30);
      const p2 = await get<Page>(`/v1/audit?limit=10&cursor=${p1.body.cursor}`);
      assert.equal(p2.body.items[0]?.seq, 11);
      // The first read appended seq 31 (audit.read) before the second read looked at the head.
      assert.equal(p2.body.head_seq, 31);
      const all = await get<Page>('/v1/audit?from=31&limit=100');
      assert.equal(all.body.has_more, false);
      // The head is served whole (issue 30 item 8): its hash is the hash of record head_seq.
      assert.equal(all.body.head_seq, 32);
      assert.equal(all.body.head_hash, all.body.items.find((r) => r.seq === 32)?.hash);
      assert.match(String(p1.body.head_hash), /^[0-9a-f]{64}$/);
      const sys = await get<Page>('/v1/audit/system?limit=100');
      if (sys.status === 200) assert.equal(sys.body.head_hash, sys.body.items.find((r) => r.seq === sys.body.head_seq)?.hash);
      assert.equal(all.body.cursor, undefined);
      const reads = all.body.items.filter((r) => r.action === 'audit.read');
      assert.equal(reads.length, 2);
      assert.equal(reads[0]?.actor, 'user:0197aaaa-0000-7000-8000-000000000001');
      assert.deepEqual(JSON.parse(reads[0]?.meta ?? '{}').count, 10);
    });

    test('filters: action prefix, actor, target, time range', async () => {
      const tokens = await get<Page>('/v1/audit?action=token.&limit=100');
      assert.deepEqual(tokens.body.items.map((r) => r.seq), [1, 6, 11, 16, 21, 26]);
      const byActor = await get<Page>('/v1/audit?actor=user:u3&limit=100');
      assert.ok(byActor.body.items.length > 0 && byActor.body.items.every((r) => r.actor === 'user:u3'));
      const byTarget = await get<Page>('/v1/audit?target_kind=agent&target_id=agent-7');
      assert.deepEqual(byTarget.body.items.map((r) => r.seq), [8]);
      const first = (await get<Page>('/v1/audit?limit=3')).body.items;
      const since = first[1]?.occurred_at as string;
      const until = first[2]?.occurred_at as string;
      const window = await get<Page>(`/v1/audit?since=${since}&until=${until}&limit=100`);
      assert.deepEqual(window.body.items.map((r) => r.seq), [2]);
      const bad = await app.request('GET', '/v1/audit?since=yesterday', { headers: { 'x-service-tenant': TENANT } });
      assert.equal(bad.status, 400);
    });

    test('a filtered record is the chain record, field for field (prev_hash and meta_commitment are derived on read)', async () => {
      const chain = new Map((await get<Page>('/v1/audit?limit=1000')).body.items.map((r) => [r.seq, r]));
      const filtered = (await get<Page>('/v1/audit?action=token.&limit=100')).body.items;
      assert.ok(filtered.length >= 6);
      for (const r of filtered) assert.deepEqual(r, chain.get(r.seq), `seq ${r.seq}`);
      // The first record of a filtered page is not preceded by its predecessor in the page.
      assert.equal(filtered[0]?.seq, 1);
      assert.equal(filtered[0]?.prev_hash, '0'.repeat(64));
      assert.equal(filtered[1]?.prev_hash, chain.get((filtered[1]?.seq as number) - 1)?.hash);
    });

    test('records served by the route verify offline against the published keys', async () => {
      const page = await get<Page>('/v1/audit?limit=1000');
      const keys = await get<{ keys: PublishedKey[] }>('/v1/audit/pubkey');
      assert.equal(keys.status, 200);
      assert.equal(keys.body.keys.length, 1);
      assert.equal(keys.body.keys[0]?.key_id, ledger.keyring.active.keyId);
      assert.equal(keys.body.keys[0]?.first_seq, 1);
      const report = verifyRecords(page.body.items, { keys: publishedKeySet(keys.body.keys) });
      assert.equal(report.ok, true, JSON.stringify(report));
    });

    test('GET /v1/audit/verify reports the stored chain and is not itself audited', async () => {
      const before = (await ledger.read(TENANT, 1, 1)).head_seq;
      const res = await get<VerifyReport>('/v1/audit/verify');
      assert.equal(res.status, 200);
      assert.equal(res.body.ok, true, JSON.stringify(res.body));
      assert.equal(res.body.chain.checked, before);
      assert.equal(res.body.checkpoints.status, 'pending');
      assert.equal((await ledger.read(TENANT, 1, 1)).head_seq, before, 'verify appended nothing');
      const from = await get<VerifyReport>('/v1/audit/verify?from=10');
      assert.equal(from.body.chain.checked, before - 9);
    });

    test('GET /v1/audit/system reads the system chain; POST /v1/audit/checkpoint checkpoints every chain', async () => {
      const sys = await get<Page>('/v1/audit/system');
      assert.equal(sys.status, 200);
      assert.equal(sys.body.items[0]?.action, 'auth.login');
      assert.equal(sys.body.items[0]?.tenant, SYSTEM_TENANT);
      const res = await app.request('POST', '/v1/audit/checkpoint', { headers: { 'x-service-tenant': TENANT } });
      assert.equal(res.status, 200);
      const cps = (res.json() as { checkpoints: Array<{ tenant: string; seq: number; attested_seq: number }> }).checkpoints;
      assert.deepEqual(cps.map((c) => c.tenant).sort(), [TENANT, SYSTEM_TENANT].sort());
      const v = await get<VerifyReport>('/v1/audit/verify');
      assert.equal(v.body.checkpoints.status, 'ok');
      assert.equal(v.body.checkpoints.latest_attested_seq, cps.find((c) => c.tenant === TENANT)?.attested_seq);
      // Another tenant's chain is empty: its verify says so, and its page is empty.
      const other = await get<VerifyReport>('/v1/audit/verify', OTHER_TENANT);
      assert.deepEqual([other.body.ok, other.body.chain.reason], [false, 'no-events']);
    });
  });
}

describe('audit routes on a server composed without a ledger', () => {
  test('answer 501 not_configured in the error envelope, not a 500', async () => {
    const services = {} as unknown as Services;
    const app = new App({
      routes: auditRoutes,
      services,
      log: pino({ level: 'silent' }),
      tls: true,
      bodyLimit: 1 << 20,
      timeoutMs: 10_000,
      setupRequired: () => false,
      authenticate: actAs,
      validateResponses: true,
    });
    for (const path of ['/v1/audit', '/v1/audit/verify', '/v1/audit/pubkey']) {
      const res = await app.request('GET', path, { headers: { 'x-service-tenant': TENANT } });
      assert.equal(res.status, 501, path);
      assert.equal((res.json() as { error: { code: string } }).error.code, 'not_configured', path);
    }
  });
});

/**
 * Bad input on every identity route: malformed JSON, wrong types, unknown fields, oversized
 * fields and bodies, non-UUID path ids and tenant headers, the system tenant, unknown tenants,
 * malformed and truncated tokens → a clear 4xx envelope, and nothing is created.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, identityCounts, type Harness } from '../../auth/harness.js';
import { identityRoutes } from '../../helpers/identity-routes.js';
import { PUBLIC, type AnyRoute } from '../../../src/contract/route.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  maxLength?: number;
  anyOf?: JsonSchema[];
}

const VALID_ID = '0190aaaa-0000-7000-8000-000000000001';
const pathOf = (r: AnyRoute, id: string) => r.path.replace(/\{[a-z_]+\}/g, id);
const wrongTypeOf = (s: JsonSchema): unknown =>
  s.type === 'string' || s.anyOf ? 12345 : s.type === 'boolean' ? 'yes' : s.type === 'integer' ? 'one' : 'x';

describe('bad input on every identity route', () => {
  let ts: TestStore;
  let h: Harness;
  let root: { session: string; userId: string; tenant: string };
  let baseline: Record<string, number>;
  before(async () => {
    ts = await createSqliteTestStore();
    await ts.store.migrate();
    h = await createHarness(ts.store, { rateLimit: { ratePerSecond: 0, burst: 1 } });
    root = await bootstrap(h);
    baseline = await identityCounts(ts.store);
  });
  after(async () => {
    await h?.dispose();
    await ts?.dispose();
  });

  const expect4xx = async (
    r: AnyRoute,
    what: string,
    res: { status: number; json: () => any; text: string },
    statuses: number[],
    code?: string,
  ) => {
    assert.ok(statuses.includes(res.status), `${r.method} ${r.path} ${what}: got ${res.status} ${res.text}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['error'], `${r.method} ${r.path} ${what}: envelope`);
    assert.equal(typeof body.error.message, 'string');
    if (code) assert.equal(body.error.code, code, `${r.method} ${r.path} ${what}`);
  };

  test(
    'malformed, wrong-typed, unknown-field, oversized and non-object bodies → 400/415 (413 above the body limit: ' +
      'test/core/auth/newcomer-https.test.ts)',
    async () => {
      for (const r of identityRoutes.filter((x) => x.body)) {
        const schema = r.body as unknown as JsonSchema;
        const p = pathOf(r, VALID_ID);
        const token = r.permission === PUBLIC ? undefined : root.session;
        const send = (body: unknown, headers: Record<string, string> = {}) => h.call(r.method, p, { token, body, headers });
        await expect4xx(r, 'malformed JSON', await send('{"email": "a@b.c",'), [400], 'bad_request');
        await expect4xx(r, 'array body', await send('[]'), [400], 'bad_request');
        await expect4xx(r, 'null body', await send('null'), [400], 'bad_request');
        await expect4xx(r, 'unknown field', await send({ surprise: true }), [400], 'bad_request');
        await expect4xx(r, 'text/plain', await send('{}', { 'content-type': 'text/plain' }), [415]);
        await expect4xx(r, 'invalid UTF-8', await send(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])), [400], 'bad_request');
        for (const [name, prop] of Object.entries(schema.properties ?? {})) {
          await expect4xx(r, `wrong type of ${name}`, await send({ [name]: wrongTypeOf(prop) }), [400], 'bad_request');
          if (prop.maxLength !== undefined) {
            await expect4xx(r, `oversized ${name}`, await send({ [name]: 'x'.repeat(prop.maxLength + 1) }), [400, 413]);
          }
        }
      }
      assert.deepEqual(await identityCounts(ts.store), baseline);
    },
  );

  test('non-UUID path ids → 400 on every route with an id', async () => {
    for (const r of identityRoutes.filter((x) => x.params)) {
      for (const bad of ['not-a-uuid', '1', "x' or '1'='1", '0190aaaa-0000-7000-8000-00000000000g']) {
        const res = await h.call(r.method, pathOf(r, encodeURIComponent(bad)), { token: root.session, body: r.body ? {} : undefined });
        await expect4xx(r, `id ${bad}`, res, [400], 'bad_request');
      }
    }
    assert.deepEqual(await identityCounts(ts.store), baseline);
  });

  test('tenant header: not a UUID or the system tenant → 400; an unknown tenant → 404 for a superadmin', async () => {
    for (const r of identityRoutes.filter((x) => x.permission !== PUBLIC)) {
      const p = pathOf(r, VALID_ID);
      for (const bad of ['not-a-uuid', '', '{}', SYSTEM_TENANT]) {
        await expect4xx(
          r,
          `tenant ${bad}`,
          await h.call(r.method, p, { token: root.session, headers: { 'x-service-tenant': bad } }),
          [400],
          'bad_request',
        );
      }
    }
    for (const p of ['/v1/members', '/v1/users']) {
      const res = await h.call('GET', p, { token: root.session, tenant: '0190aaaa-0000-7000-8000-0000000000ff' });
      assert.equal(res.status, 404, p);
    }
    assert.deepEqual(await identityCounts(ts.store), baseline);
  });

  test('malformed and truncated bearer tokens → 401 on every authenticated route', async () => {
    const t = root.session;
    for (const r of identityRoutes.filter((x) => x.permission !== PUBLIC)) {
      for (const auth of [
        `Bearer ${t.slice(0, -10)}`,
        `Bearer ${t.slice(0, 5)}`,
        `Bearer ${t.replace('svcs_', 'svck_')}`,
        'Bearer svcst_' + 'A'.repeat(52),
        'Bearer',
        `Token ${t}`,
        `Bearer ${t}\u0000`,
      ]) {
        const res = await h.call(r.method, pathOf(r, VALID_ID), { headers: { authorization: auth } });
        await expect4xx(r, `auth ${auth.slice(0, 20)}`, res, [401], 'unauthenticated');
      }
    }
    assert.deepEqual(await identityCounts(ts.store), baseline);
  });

  test('query strings: unknown parameters, out-of-range limits and bad cursors → 400', async () => {
    for (const p of ['/v1/tokens', '/v1/users', '/v1/members', '/v1/system/orgs', '/v1/system/residency', '/v1/users/superadmins']) {
      for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'cursor=not-a-uuid', 'bogus=1']) {
        const res = await h.call('GET', `${p}?${q}`, { token: root.session });
        assert.equal(res.status, 400, `${p}?${q}: ${res.text}`);
      }
    }
  });
});

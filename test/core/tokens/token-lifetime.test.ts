/**
 * Issue 30 item 6: who may issue API keys and for how long. A key without an expiry gets the
 * operator's default lifetime (90 days unless `SERVICE_TOKEN_DEFAULT_TTL` says otherwise); only
 * `ttl: "never"` makes one that never expires; `expires_at` takes any RFC 3339 form and is stored
 * as UTC with nine fractional digits; an editor's API key cannot mint keys, an admin's key can but
 * never one that outlives itself. Both stores.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { bootstrap, createHarness, userWithRole, type Harness } from '../../auth/harness.js';
import { normalizeRfc3339 } from '../../../src/contract/rfc3339.js';
import { parseTtl, tokenDefaultTtlFromEnv } from '../../../src/auth/token-ttl.js';
import { ConfigError, resolveServeConfig } from '../../../src/serve/config.js';

const DAY = 86_400_000;
const ms = (ts: string) => Date.parse(ts);

test('RFC 3339 forms normalise to UTC with nine digits; impossible dates are refused', () => {
  assert.equal(normalizeRfc3339('2030-01-01T00:00:00Z'), '2030-01-01T00:00:00.000000000Z');
  assert.equal(normalizeRfc3339('2030-01-01t02:00:00.5+02:00'), '2030-01-01T00:00:00.500000000Z');
  assert.equal(normalizeRfc3339('2029-12-31T23:30:00.123456789-01:00'), '2030-01-01T00:30:00.123456789Z');
  assert.equal(normalizeRfc3339('2030-01-01T00:00:00.000000000Z'), '2030-01-01T00:00:00.000000000Z');
  for (const bad of [
    '2030-02-30T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T00:00:60Z',
    '2030-01-01 00:00:00Z',
    '2030-01-01T00:00:00',
    '2030-01-01T00:00:00.0000000001Z',
    '2030-01-01T00:00:00+24:00',
  ]) {
    assert.equal(normalizeRfc3339(bad), undefined, bad);
  }
  assert.deepEqual(['30m', '12h', '90d', '2w', 'never', '0d', '5y', '36501d'].map(parseTtl), [
    1_800_000,
    43_200_000,
    90 * DAY,
    14 * DAY,
    null,
    undefined,
    undefined,
    undefined,
  ]);
  assert.equal(tokenDefaultTtlFromEnv({}), 90 * DAY);
  assert.equal(resolveServeConfig({}, { SERVICE_TOKEN_DEFAULT_TTL: '30d' }).tokenDefaultTtlMs, 30 * DAY);
  assert.throws(
    () => resolveServeConfig({}, { SERVICE_TOKEN_DEFAULT_TTL: 'never' }),
    (e: unknown) => e instanceof ConfigError && /per key/.test(e.message),
  );
  assert.throws(() => resolveServeConfig({}, { SERVICE_TOKEN_DEFAULT_TTL: '90 days' }), ConfigError);
});

for (const b of await testStores()) {
  describe(`${b.backend}: API key lifetimes and issuers`, { skip: b.skip }, () => {
    let ts: TestStore;
    let h: Harness;
    let short: Harness;
    let admin: { session: string; userId: string; tenant: string };
    let editor: { id: string; session: string };
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      h = await createHarness(ts.store);
      admin = await bootstrap(h);
      editor = await userWithRole(h, admin.session, admin.tenant, 'editor@example.test', 'editor');
      // A second server on the same store whose operator set a one-hour default.
      short = await createHarness(ts.store, { tokenDefaultTtlMs: 3_600_000 });
    });
    after(async () => {
      await short?.dispose();
      await h?.dispose();
      await ts?.dispose();
    });
    const issue = (hh: Harness, token: string, body: Record<string, unknown>) =>
      hh.call('POST', '/v1/tokens', { token, body: { name: 'k', ...body } });

    test('no expiry asked: the default lifetime (90 days; the operator can change it); never only when asked', async () => {
      const before = Date.now();
      const dflt = await issue(h, editor.session, { role: 'viewer' });
      assert.equal(dflt.status, 201, dflt.text);
      const exp = dflt.json().expires_at as string | null;
      assert.ok(exp !== null, 'a key without an explicit expiry expires');
      assert.ok(Math.abs(ms(exp) - (before + 90 * DAY)) < 60_000, exp);
      const hour = await issue(short, editor.session, { role: 'viewer' });
      assert.ok(Math.abs(ms(hour.json().expires_at as string) - (before + 3_600_000)) < 60_000, hour.text);
      const never = await issue(h, editor.session, { role: 'viewer', ttl: 'never' });
      assert.equal(never.status, 201, never.text);
      assert.equal(never.json().expires_at, null);
      const ttl = await issue(h, editor.session, { role: 'viewer', ttl: '12h' });
      assert.ok(Math.abs(ms(ttl.json().expires_at as string) - (before + 12 * 3_600_000)) < 60_000, ttl.text);
      const both = await issue(h, editor.session, { expires_at: '2030-01-01T00:00:00Z', ttl: '1d' });
      assert.equal(both.status, 400, both.text);
      assert.equal((await issue(h, editor.session, { ttl: 'forever' })).status, 400);
    });

    test('expires_at in any RFC 3339 form, stored and answered with nine digits', async () => {
      for (const [given, stored] of [
        ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00.000000000Z'],
        ['2030-01-01T02:00:00.5+02:00', '2030-01-01T00:00:00.500000000Z'],
        ['2030-06-01T12:00:00.123456789Z', '2030-06-01T12:00:00.123456789Z'],
      ] as const) {
        const res = await issue(h, editor.session, { role: 'viewer', expires_at: given });
        assert.equal(res.status, 201, `${given}: ${res.text}`);
        assert.equal(res.json().expires_at, stored);
        const row = await ts.store.transaction((tx) =>
          tx
            .selectFrom('api_tokens')
            .select('expires_at')
            .where('id', '=', res.json().id as string)
            .executeTakeFirstOrThrow(),
        );
        assert.equal(row.expires_at, stored);
      }
      assert.equal((await issue(h, editor.session, { expires_at: '2030-02-30T00:00:00Z' })).status, 400);
      assert.equal((await issue(h, editor.session, { expires_at: '2001-01-01T00:00:00Z' })).status, 400, 'in the past');
    });

    test("an editor's API key cannot mint keys; an admin's key can, never outliving itself", async () => {
      const editorKey = (await issue(h, editor.session, { role: 'editor', ttl: 'never' })).json().token as string;
      const minted = await issue(h, editorKey, { role: 'viewer' });
      assert.equal(minted.status, 403, minted.text);
      assert.equal(minted.json().error.code, 'forbidden');
      const editorKeyId = (await h.call('GET', '/v1/auth/whoami', { token: editorKey })).json().actor.slice('token:'.length) as string;
      assert.equal(
        (await h.call('POST', `/v1/tokens/${editorKeyId}/rotate`, { token: editorKey })).status,
        403,
        'nor rotate itself into a fresh secret',
      );

      const adminKey = await issue(h, admin.session, { role: 'admin', ttl: '2d' });
      assert.equal(adminKey.status, 201, adminKey.text);
      const cap = adminKey.json().expires_at as string;
      const child = await issue(h, adminKey.json().token as string, { role: 'viewer' });
      assert.equal(child.status, 201, child.text);
      assert.equal(child.json().expires_at, cap, 'the default is cut to the issuing key’s expiry');
      for (const body of [{ ttl: 'never' }, { ttl: '3d' }, { expires_at: '2099-01-01T00:00:00Z' }]) {
        const res = await issue(h, adminKey.json().token as string, { role: 'viewer', ...body });
        assert.equal(res.status, 403, `${JSON.stringify(body)}: ${res.text}`);
      }
      assert.equal((await issue(h, adminKey.json().token as string, { role: 'admin', ttl: '1h' })).status, 201);
      assert.equal(
        (await issue(h, adminKey.json().token as string, { role: 'owner', ttl: '1h' })).json().error.code,
        'role_ceiling',
        'the ceiling still holds',
      );
    });
  });
}

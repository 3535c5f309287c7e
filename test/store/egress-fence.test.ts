/**
 * The egress fence (migration 30) on both stores, driven by the operator commands: disarmed, `fence
 * verify` exits 7; armed, the database itself refuses an enabled subscription to a host outside the
 * allowlist (raw SQL as the owner, and on Postgres the app role's path), admits allowlisted hosts and
 * disabled rows, refuses enabling or repointing one, and `fence verify` exits 0; disarmed again, 7.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { testStores } from '../helpers/stores.js';
import { jsonOut, runSvc } from '../cli/harness.js';

const NOW = '2026-11-27T23:00:00.000000000Z';

for (const b of await testStores()) {
  describe(`${b.backend}: egress fence`, { skip: b.skip }, () => {
    test('fence status, arm, verify and actuate against the store; raw writes refused only when armed', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const tenant = randomUUID();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: tenant, name: 'acme', region: 'eu', status: 'active', created_at: NOW, deleted_at: null })
          .execute(),
      );
      const where =
        b.backend === 'sqlite'
          ? ['--data-dir', ts.config.dataDir]
          : ['--store', 'postgres', '--dsn', ts.config.dsn as string, '--data-dir', ts.config.dataDir];
      const svc = (...args: string[]) =>
        runSvc(['eventing', ...args, ...where, '-o', 'json'], { env: { SERVICE_STORE: '', SERVICE_DSN: '' } });
      const ph = (i: number) => (b.backend === 'sqlite' ? '?' : `$${i}`);
      const insert = (endpoint: string, enabled: 0 | 1, id = randomUUID()) =>
        ts.admin.query(
          `insert into event_subscriptions (id, tenant_id, name, enabled, event_types, endpoint, sink_format, secret_sealed, ` +
            `max_attempts, initial_interval_s, timeout_ms, role, created_by, cursor_seq, version, created_at, updated_at)
           values (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, '[]', ${ph(5)}, 'json', 'x', 1, 1, 1000, 'viewer', 'test', 0, 1, '${NOW}', ` +
             `'${NOW}')`,
          [id, tenant, `s-${id}`, enabled, endpoint],
        );

      const status0 = await svc('fence', 'status');
      assert.equal(status0.code, 0, status0.stderr);
      assert.deepEqual(jsonOut(status0), { armed: false, mode: 'compatibility', allow: [] });
      const verify0 = await svc('fence', 'verify');
      assert.equal(verify0.code, 7, 'disarmed: verify fails (Degraded)');
      assert.equal(jsonOut(verify0).enforced, false);
      await insert('https://evil.example.net/hook', 1); // disarmed: nothing refused

      const noYes = await runSvc(['eventing', 'fence', 'arm', ...where]);
      assert.equal(noYes.code, 2, 'arm needs --yes when not interactive');
      const bad = await svc('egress', 'actuate', '--mode', 'enforced', '--allow', 'https://x/', '--yes');
      assert.equal(bad.code, 2, 'an allow entry that is not host[:port] is a usage error');
      const act = await svc(
        'egress',
        'actuate',
        '--mode',
        'enforced',
        '--allow',
        'Hooks.Example.com',
        '--allow',
        'soar.example.org:8443',
        '--yes',
      );
      assert.equal(act.code, 0, act.stderr);
      assert.deepEqual(jsonOut(act), { mode: 'enforced', fence_armed: false, allow: ['hooks.example.com', 'soar.example.org:8443'] });
      const arm = await svc('fence', 'arm', '--yes');
      assert.equal(arm.code, 0, arm.stderr);
      assert.equal(jsonOut(arm).armed, true);

      // The database refuses, whoever writes: the owner's raw SQL here.
      await assert.rejects(insert('https://evil.example.net/hook', 1), /egress fence/);
      await assert.rejects(insert('https://soar.example.org:9443/', 1), /egress fence/, 'port not allowlisted');
      await assert.rejects(insert('https://hooks.example.com.evil.net/', 1), /egress fence/, 'suffix trick');
      await insert('https://hooks.example.com/x', 1);
      await insert('https://hooks.example.com:8443/x', 1);
      await insert('https://soar.example.org:8443/in', 1);
      const parked = randomUUID();
      await insert('https://evil.example.net/parked', 0, parked); // disabled rows deliver nothing
      await assert.rejects(ts.admin.query(`update event_subscriptions set enabled = 1 where id = ${ph(1)}`, [parked]), /egress fence/);
      const good = randomUUID();
      await insert('https://hooks.example.com/y', 1, good);
      await assert.rejects(
        ts.admin.query(`update event_subscriptions set endpoint = 'https://evil.example.net/' where id = ${ph(1)}`, [good]),
        /egress fence/,
      );
      // The app's own path (Postgres: the app role under RLS) is refused the same way.
      await assert.rejects(
        ts.store.withTenant(tenant, (tx) =>
          sql`update event_subscriptions set endpoint = 'https://evil.example.net/' where id = ${good}`.execute(tx)),
        /egress fence/,
      );

      const verify1 = await svc('fence', 'verify');
      assert.equal(verify1.code, 0, verify1.stdout + verify1.stderr);
      assert.equal(jsonOut(verify1).enforced, true);
      const rows = await ts.admin.query<{ n: number | string }>(
        `select count(*) as n from event_subscriptions where name = 'egress-fence-verify'`,
      );
      assert.equal(Number(rows[0]?.n), 0, 'verify leaves nothing behind');

      const disarm = await svc('fence', 'arm', '--disarm', '--yes');
      assert.equal(disarm.code, 0, disarm.stderr);
      const verify2 = await svc('fence', 'verify');
      assert.equal(verify2.code, 7, 'disarmed again: verify fails');
      await insert('https://evil.example.net/again', 1);
    });

    if (b.backend === 'postgres') {
      test('the app role can read but not change the egress tables', async (t) => {
        const ts = await b.create();
        t.after(() => ts.dispose());
        await ts.store.migrate();
        const p = await ts.store.transaction((tx) => tx.selectFrom('egress_settings').selectAll().execute());
        assert.equal(p[0]?.mode, 'compatibility');
        await assert.rejects(
          ts.store.transaction((tx) => sql`update egress_settings set fence_armed = 0`.execute(tx)),
          /permission denied/,
        );
        await assert.rejects(
          ts.store.transaction((tx) =>
            sql`insert into egress_allowlist (host, created_at) values ('evil.example.net', ${NOW})`.execute(tx),
          ),
          /permission denied/,
        );
        await assert.rejects(
          ts.store.transaction((tx) => sql`drop trigger event_subscriptions_egress_fence on event_subscriptions`.execute(tx)),
          /must be owner|permission denied/,
        );
      });
    }
  });
}

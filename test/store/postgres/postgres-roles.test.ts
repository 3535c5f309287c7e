import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_APP_ROLE, resolveAppRole, TENANT_POLICY } from '../../../src/store/postgres/postgres-roles.js';
import { TENANT_TABLES } from '../../../src/store/schema.js';
import { openStore, type StoreLog } from '../../../src/store/store.js';
import { StoreError } from '../../../src/store/store-error.js';
import { createTempDatabase, dsnFor, pgQuery, pgTestDsn, randomName } from '../../helpers/pg.js';
import { createPostgresTestStore, selectedBackends } from '../../helpers/stores.js';
import { addAgents, addTenant } from '../store-fixtures.js';
import { appRoleGrants, POSTGRES_MIGRATIONS } from '../../../src/store/postgres/postgres-migrations.js';

const target = selectedBackends().has('postgres')
  ? await pgTestDsn()
  : { skip: `SVC_TEST_STORES=${process.env['SVC_TEST_STORES']} excludes postgres` };
const adminDsn = target.dsn ?? '';
const isolation = (re: RegExp) => (err: unknown) => err instanceof StoreError && err.code === 'isolation_broken' && re.test(err.message);

function recordingLog(): StoreLog & { warnings: string[]; fields: object[] } {
  const warnings: string[] = [];
  const fields: object[] = [];
  return { warnings, fields, info() {}, warn: (obj, msg) => void (warnings.push(msg ?? ''), fields.push(obj)) };
}

/** Warnings other than the autovacuum one, which depends on the server's configuration (its own tests below). */
const besidesAutovacuum = (warnings: string[]): string[] => warnings.filter((w) => !/autovacuum/.test(w));

describe('postgres: roles and row-level security', { skip: target.skip ?? false }, () => {
  it('the app role is NOLOGIN and cannot bypass RLS; every tenant_id table is forced under tenant_isolation', async () => {
    const h = await createPostgresTestStore(adminDsn);
    try {
      await h.store.migrate();
      const [role] = await h.admin.query<{ rolcanlogin: boolean; rolsuper: boolean; rolbypassrls: boolean }>(
        'select rolcanlogin, rolsuper, rolbypassrls from pg_roles where rolname = $1', [DEFAULT_APP_ROLE]);
      assert.deepEqual(role, { rolcanlogin: false, rolsuper: false, rolbypassrls: false });
      const tables = await h.admin.query<{ name: string; rls: boolean; forced: boolean; qual: string; check: string }>(`
        select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced,
               pg_get_expr(p.polqual, p.polrelid) as qual, pg_get_expr(p.polwithcheck, p.polrelid) as check
        from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id'
        left join pg_policy p on p.polrelid = c.oid and p.polname = $1
        where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' order by 1`, [TENANT_POLICY]);
      assert.deepEqual(tables.map((t) => t.name), [...TENANT_TABLES].sort());
      for (const t of tables) {
        assert.equal(t.rls && t.forced, true, t.name);
        for (const expr of [t.qual, t.check]) assert.match(expr, /tenant_id = \(current_setting\('app\.tenant_id'::text\)\)::uuid/);
      }
      const grants = await h.admin.query<{ table_name: string; privilege_type: string }>(
        `select table_name, privilege_type from information_schema.role_table_grants where grantee = $1 order by 1, 2`, [DEFAULT_APP_ROLE]);
      const expected = Object.entries(appRoleGrants()).flatMap(([t, ps]) =>
        ps.map((p) => ({ table_name: t, privilege_type: p.toUpperCase() })),
      );
      assert.deepEqual(grants, expected.sort((x, y) => (x.table_name + x.privilege_type).localeCompare(y.table_name + y.privilege_type)));
    } finally {
      await h.dispose();
    }
  });

  it('migrate refuses to serve when a tenant table lacks row-level security', async () => {
    const h = await createPostgresTestStore(adminDsn);
    try {
      await h.store.migrate();
      await h.admin.query('create table rogue (id uuid primary key, tenant_id uuid not null)');
      await assert.rejects(
        h.store.migrate(),
        isolation(/rogue lacks ENABLE\/FORCE ROW LEVEL SECURITY.*rogue lacks the tenant_isolation policy/),
      );
    } finally {
      await h.dispose();
    }
  });

  it('migrate refuses an app role that can bypass RLS', async () => {
    const role = randomName('svc_t_app_');
    await pgQuery(adminDsn, `create role ${role} nologin bypassrls`);
    const h = await createPostgresTestStore(adminDsn, { pgAppRole: role });
    try {
      await assert.rejects(h.store.migrate(), isolation(/SUPERUSER or BYPASSRLS/));
    } finally {
      await h.dispose();
      await pgQuery(adminDsn, `drop role if exists ${role}`);
    }
  });

  it('a non-superuser owner DSN with a pre-created app role migrates, and FORCE confines the owner too', async () => {
    const owner = randomName('svc_t_owner_');
    const app = randomName('svc_t_app_');
    await pgQuery(adminDsn, `create role ${owner} login; create role ${app} nologin; grant ${app} to ${owner}`);
    const temp = await createTempDatabase(adminDsn, { owner });
    const ownerDsn = dsnFor(adminDsn, temp.name, owner);
    const log = recordingLog();
    const store = await openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: ownerDsn, pgAppRole: app }, log);
    try {
      await store.migrate();
      assert.deepEqual(besidesAutovacuum(log.warnings), []);
      const [a, b] = [await addTenant(store), await addTenant(store)];
      const idsA = await addAgents(store, a, 2);
      await addAgents(store, b, 2);
      const seen = await store.withTenant(a, (tx) => tx.selectFrom('agents').select('id').execute());
      assert.deepEqual(seen.map((r) => r.id).sort(), [...idsA].sort());
      const who = await store.withTenant(a, (tx) => sql<{ u: string }>`select current_user as u`.execute(tx));
      assert.equal(who.rows[0]?.u, app);
      const [tableOwner] = await pgQuery<{ o: string }>(temp.dsn, `select tableowner as o from pg_tables where tablename = 'agents'`);
      assert.equal(tableOwner?.o, owner);
      // The owner itself, connecting directly without a tenant, is not exempt (FORCE ROW LEVEL SECURITY).
      await assert.rejects(pgQuery(ownerDsn, 'select * from agents'));
    } finally {
      await store.close();
      await temp.drop();
      await pgQuery(adminDsn, `drop role if exists ${owner}; drop role if exists ${app}`);
    }
  });

  it('several databases migrating at once create the shared app role once, without errors', async () => {
    const role = randomName('svc_t_app_');
    const temps = await Promise.all([1, 2, 3].map(() => createTempDatabase(adminDsn)));
    const stores = await Promise.all(
      temps.map((t) => openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: t.dsn, pgAppRole: role })),
    );
    try {
      const results = await Promise.all(stores.map((s) => s.migrate()));
      for (const r of results) assert.deepEqual(r.applied, POSTGRES_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
      const roles = await pgQuery(adminDsn, 'select 1 from pg_roles where rolname = $1', [role]);
      assert.equal(roles.length, 1);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await Promise.all(temps.map((t) => t.drop()));
      await pgQuery(adminDsn, `drop role if exists ${role}`);
    }
  });

  it('warns when the DSN user is a superuser', async () => {
    const temp = await createTempDatabase(adminDsn);
    const log = recordingLog();
    const store = await openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: temp.dsn }, log);
    try {
      const [me] = await pgQuery<{ s: boolean }>(temp.dsn, 'select rolsuper as s from pg_roles where rolname = current_user');
      await store.migrate();
      assert.equal(log.warnings.some((w) => /superuser/.test(w)), me?.s === true);
    } finally {
      await store.close();
      await temp.drop();
    }
  });

  it('warns at start when the server runs without autovacuum, and only then', async () => {
    const temp = await createTempDatabase(adminDsn);
    const log = recordingLog();
    const store = await openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: temp.dsn }, log);
    try {
      const [cfg] = await pgQuery<{ av: string; tc: string }>(
        temp.dsn,
        "select current_setting('autovacuum') as av, current_setting('track_counts') as tc",
      );
      await store.migrate();
      const off = cfg?.av !== 'on' || cfg?.tc !== 'on';
      assert.equal(
        log.warnings.some((w) => /autovacuum is off/.test(w)),
        off,
        `autovacuum=${cfg?.av} track_counts=${cfg?.tc}: ${JSON.stringify(log.warnings)}`,
      );
    } finally {
      await store.close();
      await temp.drop();
    }
  });

  it('names the service tables whose autovacuum an operator disabled', async () => {
    const temp = await createTempDatabase(adminDsn);
    const first = await openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: temp.dsn }, recordingLog());
    try {
      await first.migrate();
    } finally {
      await first.close();
    }
    await pgQuery(
      temp.dsn,
      'alter table access_edges set (autovacuum_enabled = false); alter table agents set (autovacuum_enabled = false)',
    );
    const log = recordingLog();
    const store = await openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: temp.dsn }, log);
    try {
      await store.migrate();
      const i = log.warnings.findIndex((w) => /autovacuum/.test(w));
      assert.ok(i >= 0, JSON.stringify(log.warnings));
      assert.deepEqual((log.fields[i] as { tables_without_autovacuum?: string[] }).tables_without_autovacuum, ['access_edges', 'agents']);
    } finally {
      await store.close();
      await temp.drop();
    }
  });

  it('an unreachable server reports not reachable and migrate rejects', async () => {
    const store = await openStore({
      backend: 'postgres',
      dataDir: '/nonexistent',
      dsn: 'postgres://postgres@127.0.0.1:1/none',
      busyTimeoutMs: 500,
    });
    try {
      const ready = await store.readiness();
      assert.equal(ready.ok, false);
      assert.equal(ready.reachable, false);
      assert.ok(ready.error);
      await assert.rejects(store.migrate());
    } finally {
      await store.close();
    }
  });
});

describe('postgres: app role configuration', () => {
  it('takes config, then SERVICE_PG_APP_ROLE, then svc_app, and refuses names that need quoting', async () => {
    assert.equal(resolveAppRole(undefined, {}), 'svc_app');
    assert.equal(resolveAppRole(undefined, { SERVICE_PG_APP_ROLE: 'tenant_app' }), 'tenant_app');
    assert.equal(resolveAppRole('cfg_role', { SERVICE_PG_APP_ROLE: 'tenant_app' }), 'cfg_role');
    for (const bad of ['Svc', 'svc-app', 'svc app', '"x"', 'x;drop role postgres', '', 'a'.repeat(64)]) {
      assert.throws(() => resolveAppRole(bad, {}), (err) => err instanceof StoreError && err.code === 'invalid_config', bad);
    }
    await assert.rejects(
      openStore({ backend: 'postgres', dataDir: '/nonexistent', dsn: 'postgres://127.0.0.1/x', pgAppRole: 'x;drop' }),
      (err) => err instanceof StoreError && err.code === 'invalid_config',
    );
    await assert.rejects(openStore({ backend: 'postgres', dataDir: '/nonexistent' }), /needs a DSN/);
  });
});

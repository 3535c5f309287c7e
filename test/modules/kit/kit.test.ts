/**
 * The module kit's must-show: a throwaway module (this folder: one route file, one table on both
 * backends, one CLI command, one event type) composed into the real `svc serve` without any edit
 * of a central file, and exercised end to end on both stores over HTTPS.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { allManifests, allRoutes } from '../../../src/routes.js';
import { storage } from '../../../src/storage.js';
import { runSvc } from '../../cli/harness.js';
import { createTempDatabase, pgTestDsn } from '../../helpers/pg.js';
import { call, REPO_ROOT, setupAndLogin, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { selectedBackends } from '../../helpers/stores.js';
import { kitManifest } from './index.js';
import { KIT_VERSION } from './storage.js';

const KIT_BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'svc-kit.js');
const admin = { email: 'kit@example.com', password: 'kit-password-1234' };
const pgTarget = await pgTestDsn();

function srcFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const full = path.join(dir, n);
    return statSync(full).isDirectory() ? srcFiles(full) : n.endsWith('.ts') ? [full] : [];
  });
}

describe('module kit: a namespace added from the template', () => {
  it('needed no edit of a central file: nothing in src/ names it, the registries do not hold it', () => {
    const naming = srcFiles(path.join(REPO_ROOT, 'src')).filter((f) =>
      /(from|import)\s*\(?\s*'[^']*\/test\/|\bkitManifest\b/.test(readFileSync(f, 'utf8')),
    );
    assert.deepEqual(naming, []);
    assert.equal(allManifests().some((m) => m.name === 'kit'), false);
    assert.equal(allRoutes().some((r) => r.path.startsWith('/v1/m/kit/')), false);
    assert.equal(storage.areas.some((a) => a.name === 'kit'), false);
    assert.equal(storage.sqlite.some((m) => m.version === KIT_VERSION), false);
  });

  const backends = [...selectedBackends()].filter((b) => b === 'sqlite' || b === 'postgres');
  for (const backend of backends) {
    const skip = backend === 'postgres' ? (pgTarget.skip ?? false) : false;
    it(`${backend}: migrates, serves with permissions, logs its event, runs its CLI command`, { skip }, async () => {
      const db = backend === 'postgres' ? await createTempDatabase(pgTarget.dsn as string) : undefined;
      let server: TestServer | undefined;
      try {
        server = await startServer({ bin: KIT_BIN, args: db ? ['--store', 'postgres', '--dsn', db.dsn] : [] });
        const s = server;
        const { tenant, token } = await setupAndLogin(s, admin);
        const as = (tok: string | undefined, ten: string, method: string, p: string, body?: unknown) =>
          call(s, method, p, {
            headers: {
              ...(tok ? { authorization: `Bearer ${tok}` } : {}),
              'x-service-tenant': ten,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });

        // Its migration applied: /readyz counts it.
        const ready = await call(s, 'GET', '/readyz');
        assert.equal(ready.status, 200, ready.text);
        assert.deepEqual(ready.json().checks.store.migrations, { current: KIT_VERSION, expected: KIT_VERSION });

        // Its route answers with its permission checks: none without a credential, none for a viewer's write.
        assert.equal((await as(undefined, tenant, 'POST', '/v1/m/kit/notes', { text: 'x' })).status, 401);
        const viewer = await as(token, tenant, 'POST', '/v1/tokens', { name: 'kit-viewer', role: 'viewer', tenant });
        assert.equal(viewer.status, 201, viewer.text);
        const viewerToken = viewer.json().token as string;
        const refused = await as(viewerToken, tenant, 'POST', '/v1/m/kit/notes', { text: 'no' });
        assert.equal(refused.status, 403, refused.text);
        const bad = await as(token, tenant, 'POST', '/v1/m/kit/notes', { text: '' });
        assert.equal(bad.status, 400, bad.text);
        const added = await as(token, tenant, 'POST', '/v1/m/kit/notes', { text: 'first note' });
        assert.equal(added.status, 201, added.text);
        const note = added.json();
        const listed = await as(viewerToken, tenant, 'GET', '/v1/m/kit/notes');
        assert.equal(listed.status, 200, listed.text);
        assert.deepEqual(listed.json().items, [note]);

        // Another tenant does not see it.
        const org = await as(token, tenant, 'POST', '/v1/system/orgs', { name: 'Other' });
        assert.equal(org.status, 201, org.text);
        const other = org.json().id as string;
        const otherList = await as(token, other, 'GET', '/v1/m/kit/notes');
        assert.equal(otherList.status, 200, otherList.text);
        assert.deepEqual(otherList.json().items, []);

        // Its event is in the durable event log, once.
        const events = await as(token, tenant, 'GET', '/v1/m/eventing/events?type=kit.note_added');
        assert.equal(events.status, 200, events.text);
        assert.deepEqual(
          events.json().items.map((e: { subject: string; source: string }) => [e.subject, e.source]),
          [[`kit_note/${note.id}`, '/svc/kit']],
        );

        // Its CLI command runs against the server.
        const ca = path.join(tempDir('svc-kit-cli-'), 'ca.pem');
        writeFileSync(ca, s.certPem as string);
        const run = await runSvc(['kit', 'notes', '--server', s.url, '--ca-cert', ca, '--token', token, '--tenant', tenant, '-o', 'json'], {
          bin: KIT_BIN,
        });
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(JSON.parse(run.stdout).items, [note]);

        if (db) {
          // RLS enforced by Postgres itself: as the app role, the other tenant reads no row, the owner one.
          const client = new pg.Client({ connectionString: db.dsn });
          await client.connect();
          try {
            const count = async (t: string): Promise<number> => {
              await client.query('begin');
              try {
                await client.query('set local role svc_app');
                await client.query(`select set_config('app.tenant_id', $1, true)`, [t]);
                return Number((await client.query('select count(*) as n from kit_notes')).rows[0].n);
              } finally {
                await client.query('rollback');
              }
            };
            assert.equal(await count(other), 0);
            assert.equal(await count(tenant), 1);
            const forced = await client.query(`select relforcerowsecurity as f from pg_class where relname = 'kit_notes'`);
            assert.equal(forced.rows[0].f, true);
          } finally {
            await client.end();
          }
        }
      } finally {
        await server?.stop();
        await db?.drop();
      }
    });
  }

  it('its manifest carries everything it adds', () => {
    assert.deepEqual(
      [kitManifest.routes.length, kitManifest.storage?.tables.map((t) => t.name), kitManifest.cli?.length, kitManifest.events?.length],
      [2, ['kit_notes'], 1, 1],
    );
  });
});

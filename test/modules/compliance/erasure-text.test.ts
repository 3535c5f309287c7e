/**
 * Erasure leaves no personal text behind (issue 48 items 5 and 6), on both stores. The subject, an
 * admin of the tenant, types its e-mail and name (and case variants of them) into every field the
 * API lets it: agent name, labels and external id, API key names (one revoked), a finding's
 * message, subject, artifact and triage note, a legal hold's matter, reason, title and on-behalf-of,
 * a kill switch's reason, a workspace's name and path; the owner types them into the erasure's case
 * ref and reason, the approvers into their decisions. After the erasure, the strings (ASCII case
 * folded) are in:
 *  - no file of the data directory (svc.db, -wal, -shm, attached files, keys), read as raw bytes;
 *  - on Postgres, no line of `pg_dump`, and after the cleanup docs/compliance.md documents (its
 *    lines run as written, as the documented roles: a non-superuser owner and the superuser), no
 *    relation file of the database;
 *  - no answer of the list and get routes, no ledger export format, no event-log page;
 * and the receipt names each table it redacted.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { call, startServer, tempDir, type TestServer } from '../../helpers/server.js';
import { testStores } from '../../helpers/stores.js';
import { dsnFor, pgQuery, pgTestDsn } from '../../helpers/pg.js';
import { acceptedTokens } from '../../../src/encoders/registry.js';
import { filesContainingFolded, liveSqliteColumns, relationsContaining } from './erasure-search.js';

const run = promisify(execFile);
const DOC = new URL('../../../../docs/compliance.md', import.meta.url);

/** The `psql` lines of the documented Postgres clean-up, as written in docs/compliance.md. */
function documentedCleanup(): string[] {
  const text = readFileSync(DOC, 'utf8');
  const at = text.indexOf('<!-- erasure-postgres-cleanup');
  assert.ok(at > 0, 'docs/compliance.md marks the clean-up block');
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, 'the clean-up block');
  return block[1]!
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** Words of a documented command line (single quotes only, as the docs use). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

for (const b of await testStores()) {
  describe(`${b.backend}: erasure redacts the subject's identifiers from every free-text field`, { skip: b.skip }, () => {
    let server: TestServer;
    let dataDir: string;
    let tenant: string;
    let owner: string;
    let subject: string;
    let subjectId: string;
    const approvers: string[] = [];
    const tag = randomBytes(5).toString('hex');
    const email = `kim.${tag}@example.test`;
    const name = `Kim Lee ${tag}`;
    const needles = [email, name];
    // Postgres: a non-superuser owner and app role of this test's own, as docs/storage.md recommends.
    const pgRole = `svc_owner_${tag}`;
    const appRole = `svc_app_${tag}`;
    let adminDsn = '';
    let dbName = '';
    let ownerDsn = '';
    const json = { 'content-type': 'application/json' };
    const send = (token: string, method: string, p: string, body?: unknown) =>
      call(server, method, p, {
        headers: { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, ...(body !== undefined ? json : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const ok = async (token: string, method: string, p: string, body?: unknown) => {
      const r = await send(token, method, p, body);
      assert.ok(r.status >= 200 && r.status < 300, `${method} ${p}: ${r.status} ${r.text}`);
      return r.text === '' ? {} : r.json();
    };
    const login = async (em: string, password: string) =>
      (await call(server, 'POST', '/v1/auth/login', { body: JSON.stringify({ email: em, password }), headers: json })).json()
        .token as string;

    before(async () => {
      dataDir = tempDir('svc-erasure-text-');
      const args: string[] = [];
      const env: Record<string, string> = { SERVICE_RATE_LIMIT_RPS: '0' };
      if (b.backend === 'postgres') {
        adminDsn = (await pgTestDsn()).dsn as string;
        dbName = `svc_test_erasure_${tag}`;
        await pgQuery(adminDsn, `create role "${pgRole}" login`);
        await pgQuery(adminDsn, `create role "${appRole}" nologin nobypassrls`);
        await pgQuery(adminDsn, `grant "${appRole}" to "${pgRole}"`);
        await pgQuery(adminDsn, `create database "${dbName}" template template0 owner "${pgRole}"`);
        ownerDsn = dsnFor(adminDsn, dbName, pgRole);
        args.push('--store', 'postgres', '--dsn', ownerDsn);
        env['SERVICE_PG_APP_ROLE'] = appRole;
      }
      server = await startServer({ dataDir, args, env, timeoutMs: 90_000 });
      const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
      const setup = await call(server, 'POST', '/v1/setup', {
        body: JSON.stringify({ token, email: 'owner@example.test', password: 'owner password 123', organization: 'Acme' }),
        headers: json,
      });
      assert.equal(setup.status, 201, setup.text);
      tenant = setup.json().organization.id;
      owner = await login('owner@example.test', 'owner password 123');
      for (const em of ['ed1@example.test', 'ed2@example.test']) {
        await ok(owner, 'POST', '/v1/users', { email: em, password: 'a long enough password', role: 'editor' });
        approvers.push(await login(em, 'a long enough password'));
      }
      subjectId = (await ok(owner, 'POST', '/v1/users', { email, password: 'a long enough password', role: 'admin' })).id;
      subject = await login(email, 'a long enough password');
    });

    after(async () => {
      await server?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (b.backend === 'postgres' && adminDsn) {
        await pgQuery(adminDsn, `drop database if exists "${dbName}" with (force)`);
        await pgQuery(adminDsn, `drop role if exists "${pgRole}"`);
        await pgQuery(adminDsn, `drop role if exists "${appRole}"`);
      }
    });

    it('plants the strings through the API, erases, and finds them nowhere', async () => {
      const EMAIL = email.toUpperCase();
      const nameLower = name.toLowerCase();
      // As the subject: every field it can type into.
      const agent = await ok(subject, 'POST', '/v1/agents', {
        name: `agent of ${email}`,
        external_id: `ext-${EMAIL}`,
        labels: { owner: name, contact: EMAIL },
      });
      const patch = { name: `${nameLower}'s agent`, labels: { backup: email }, version: agent.version };
      await ok(subject, 'PATCH', `/v1/agents/${agent.id}`, patch);
      const other = await ok(subject, 'POST', '/v1/agents', { name: 'build bot' });
      const revoked = await ok(subject, 'POST', '/v1/tokens', { name: `key of ${name}`, tenant });
      await ok(subject, 'DELETE', `/v1/tokens/${revoked.id}`);
      await ok(subject, 'POST', '/v1/tokens', { name: `ci ${EMAIL}`, tenant });
      const report = await ok(subject, 'POST', '/v1/m/security/findings', {
        findings: [
          {
            rule_id: 'svc.test.personal',
            severity: 'high',
            subject_kind: 'host',
            subject_ref: `laptop-${email}`,
            message: `seen ${name} <${EMAIL}> at the door`,
            artifact_uri: `notes/${email}.md`,
          },
        ],
      });
      await ok(subject, 'PATCH', `/v1/m/security/findings/${report.ids[0]}`, { status: 'acknowledged', note: `asked ${name}` });
      await ok(subject, 'POST', '/v1/m/compliance/holds', {
        subject_kind: 'agent',
        subject_ref: other.id,
        matter: `matter of ${name}`,
        reason: `requested by ${email}`,
        title: `${EMAIL} hold`,
        on_behalf_of: name,
      });
      await ok(subject, 'POST', '/v1/m/governance/pep/kill-switches', { agent: other.id, reason: `stopped by ${name}` });
      await ok(subject, 'POST', '/v1/workspaces', { root_path: `/home/${email}/src`, display_name: `${name} workspace` });

      // The erasure, under dual control; the case ref, reason and decisions carry the strings too.
      const reg = await ok(owner, 'POST', '/v1/m/compliance/erasure', {
        case_ref: `DSR for ${email}`,
        subject_kind: 'user',
        subject_ref: subjectId,
        aliases: [name],
        reason: `request from ${name}`,
      });
      const pending = await ok(owner, 'POST', `/v1/m/compliance/erasure/${reg.id}/execute`, {});
      for (const t of approvers)
        await ok(t, 'POST', `/v1/m/governance/approvals/${pending.approval_id}/decisions`, {
          decision: 'approve',
          reason: `checked ${name}`,
        });
      const done = await send(owner, 'POST', `/v1/m/compliance/erasure/${reg.id}/execute`, { approval_id: pending.approval_id });
      assert.equal(done.status, 200, done.text);
      const receipt = await ok(owner, 'GET', `/v1/m/compliance/erasure/${reg.id}/receipt`);
      // Every answer the API gives a reader of the tenant.
      const reads = [
        '/v1/agents?limit=100',
        `/v1/agents/${agent.id}`,
        '/v1/tokens?limit=100',
        '/v1/users?limit=100',
        '/v1/m/security/findings?limit=100',
        `/v1/m/security/findings/${report.ids[0]}`,
        '/v1/m/security/findings/export',
        '/v1/m/governance/approvals?limit=100',
        `/v1/m/governance/approvals/${pending.approval_id}`,
        '/v1/m/governance/pep/kill-switches',
        '/v1/m/compliance/holds?limit=100',
        '/v1/m/compliance/erasure?limit=100',
        `/v1/m/compliance/erasure/${reg.id}`,
        `/v1/m/compliance/erasure/${reg.id}/receipt`,
        '/v1/m/eventing/events?limit=1000',
        '/v1/workspaces?limit=100',
        '/v1/audit?limit=1000',
        '/v1/audit/system?limit=1000',
        ...acceptedTokens('ledger_export').map((f) => `/v1/audit/export?format=${f}`),
      ];
      const leaks: string[] = [];
      for (const p of reads) {
        const r = await send(owner, 'GET', p);
        assert.equal(r.status, 200, `${p}: ${r.text.slice(0, 300)}`);
        for (const n of needles) if (r.text.toLowerCase().includes(n.toLowerCase())) leaks.push(`${p}: ${n}`);
      }
      assert.deepEqual(leaks, [], 'API answers carrying an erased string');

      if (b.backend === 'sqlite') {
        assert.deepEqual(liveSqliteColumns(join(dataDir, 'svc.db'), needles), [], 'live rows of svc.db');
        assert.deepEqual(filesContainingFolded(dataDir, needles), [], 'files of the data directory');
      }
      else {
        const dump = await run('pg_dump', ['-h', '127.0.0.1', '-U', new URL(adminDsn).username || 'postgres', '-d', dbName], {
          maxBuffer: 256 * 1024 * 1024,
        });
        const hits = needles.filter((n) => dump.stdout.toLowerCase().includes(n.toLowerCase()));
        assert.deepEqual(hits, [], 'pg_dump');
        // The documented clean-up, as written, as the documented roles (the superuser of the docs is the test's admin user).
        const admin = new URL(adminDsn).username || 'postgres';
        for (const line of documentedCleanup()) {
          const w = words(line).map((x) => x.replace(/\bsvc_owner\b/g, pgRole));
          assert.equal(w[0], 'psql', line);
          const args = w
            .slice(1)
            .map((x, i, all) => (all[i - 1] === '-d' && x === 'svc' ? dbName : all[i - 1] === '-U' && x === 'postgres' ? admin : x));
          const out = await run('psql', ['-h', '127.0.0.1', ...args], { env: { ...process.env, PGPASSWORD: '' } });
          assert.doesNotMatch(out.stderr, /ERROR|WARNING/, `${line}: ${out.stderr}`);
        }
        const documented = documentedCleanup().join(' ');
        for (const x of receipt.erased as { where: string }[]) {
          const table = /^(\w+) \(/.exec(x.where)?.[1];
          if (table) assert.match(documented, new RegExp(`\\b${table}\\b`), `the documented VACUUM names ${table}`);
        }
        assert.deepEqual(await relationsContaining(dsnFor(adminDsn, dbName), needles), [], 'relation files after the clean-up');
      }

      // The receipt names each table it redacted, with the rows changed.
      const counted = (table: string) =>
        (receipt.erased as { where: string; count: number }[])
          .filter((x) => x.where.startsWith(`${table} (`))
          .reduce((n, x) => n + x.count, 0);
      for (const [table, atLeast] of Object.entries({
        agents: 1,
        api_tokens: 2,
        events: 3,
        security_findings: 1,
        cmp_holds: 1,
        cmp_erasures: 1,
        gov_approvals: 1,
        gov_approval_decisions: 2,
        gov_kill_switches: 1,
        workspaces: 1,
      }))
        assert.ok(counted(table) >= atLeast, `${table}: ${JSON.stringify(receipt.erased)}`);
    });
  });
}

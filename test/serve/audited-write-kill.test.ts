/**
 * kill -9 of `svc serve` under an audited-write load (issue 36, "a faster request path"): 16
 * clients create agents through `POST /v1/agents` while some requests are refused inside the same
 * group commits (a duplicate `external_id`: 409, rolled back to its savepoint), and the server is
 * SIGKILLed at a random moment. After a restart on the same data (SQLite file, or the same Postgres
 * database and data dir):
 * - every 201 has its agent row and its `agent.create` record;
 * - no `agent.create` record names an agent that does not exist (no record of a change that
 *   rolled back or never committed), and none names a refused duplicate;
 * - an agent that committed without an answer (the kill came between its commit and its record)
 *   is covered by an `audit.recovered_after_failure` record after the restart's recovery;
 * - the chain verifies.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RECOVERED_ACTION } from '../../src/ledger/audit-intent.js';
import { call, setupAndLogin, startServer, type StartOptions, type TestServer } from '../helpers/server.js';
import BetterSqlite3 from 'better-sqlite3';
import { createTempDatabase, pgQuery, pgTestDsn, type TempDatabase } from '../helpers/pg.js';
import { selectedBackends } from '../helpers/stores.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
const CLIENTS = 16;
const MIN_ACKS = 150;

interface Outcome {
  acked: Map<string, string>; // agent id -> name
  refused: string[]; // names of duplicates answered 409
  unanswered: string[]; // names sent without an answer (the kill)
}

/** Run CLIENTS closed-loop writers until MIN_ACKS 201s plus a random delay, then SIGKILL the server. */
async function loadAndKill(server: TestServer, token: string, tenant: string): Promise<Outcome> {
  const out: Outcome = { acked: new Map(), refused: [], unanswered: [] };
  const headers = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'content-type': 'application/json' };
  const first = await call(server, 'POST', '/v1/agents', { headers, body: JSON.stringify({ name: 'anchor', external_id: 'ext-anchor' }) });
  assert.equal(first.status, 201, first.text);
  out.acked.set(first.json().id as string, 'anchor');
  let killed = false;
  let n = 0;
  const worker = async (w: number): Promise<void> => {
    while (!killed) {
      const i = n++;
      // Every 7th request collides with the anchor's external_id: refused, rolled back in its group.
      const dup = i % 7 === 3;
      const name = dup ? `dup-${w}-${i}` : `kill-${w}-${i}`;
      const body = JSON.stringify(dup ? { name, external_id: 'ext-anchor' } : { name, labels: { w: String(w) } });
      let res: Awaited<ReturnType<typeof call>>;
      try {
        res = await call(server, 'POST', '/v1/agents', { headers, body });
      } catch {
        out.unanswered.push(name);
        return;
      }
      if (res.status === 201) out.acked.set(res.json().id as string, name);
      else if (res.status === 409 && dup) out.refused.push(name);
      else throw new Error(`unexpected ${res.status} for ${name}: ${res.text}`);
      if (!killed && out.acked.size >= MIN_ACKS) {
        killed = true;
        // Somewhere inside a group's life: running, committing, fsyncing, signing, appending.
        setTimeout(() => server.child.kill('SIGKILL'), Math.floor(Math.random() * 30));
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, w) => worker(w)));
  await new Promise<void>((resolve) =>
    server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve()),
  );
  assert.equal(server.child.signalCode, 'SIGKILL');
  return out;
}

async function pages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next: string | undefined }>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await fetchPage(cursor);
    all.push(...p.items);
    cursor = p.next;
  } while (cursor !== undefined);
  return all;
}

interface Rec {
  seq: number;
  action: string;
  target_id: string;
  meta: Record<string, unknown>;
}

async function check(server: TestServer, token: string, tenant: string, out: Outcome, markers: () => Promise<number>): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant };
  const agents = await pages<{ id: string; name: string }>(async (cursor) => {
    const r = await call(server, 'GET', `/v1/agents?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    assert.equal(r.status, 200, r.text);
    const j = r.json();
    return { items: j.items, next: j.has_more ? j.cursor : undefined };
  });
  const records = await pages<Rec>(async (cursor) => {
    const r = await call(server, 'GET', `/v1/audit?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    assert.equal(r.status, 200, r.text);
    const j = r.json();
    // meta is served as the canonical JSON text the record signs
    const items = (j.items as Array<Omit<Rec, 'meta'> & { meta: string | Record<string, unknown> }>).map((r) => ({
      ...r,
      meta: typeof r.meta === 'string' ? (JSON.parse(r.meta) as Record<string, unknown>) : r.meta,
    }));
    return { items, next: j.has_more ? String((items[items.length - 1] as Rec).seq + 1) : undefined };
  });
  const byId = new Map(agents.map((a) => [a.id, a.name]));
  const created = new Map(records.filter((r) => r.action === 'agent.create').map((r) => [r.target_id, r]));
  // Every acknowledged write: its row and its record.
  for (const [id, name] of out.acked) {
    assert.equal(byId.get(id), name, `acknowledged agent ${name} (${id}) is stored`);
    assert.ok(created.has(id), `acknowledged agent ${name} (${id}) has its agent.create record`);
  }
  // No record of a change that is not stored (rolled back, refused, or lost).
  for (const id of created.keys()) assert.ok(byId.has(id), `agent.create record for ${id} names a stored agent`);
  const names = new Set(agents.map((a) => a.name));
  for (const name of out.refused) assert.ok(!names.has(name), `refused duplicate ${name} is not stored`);
  for (const r of created.values())
    assert.ok(!String(r.meta['name']).startsWith('dup-'), `no record of a refused duplicate (${String(r.meta['name'])})`);
  // A change that committed without its record (killed in between) is covered by a recovery record.
  const withoutRecord = agents.filter((a) => !created.has(a.id));
  const recovered = records.filter((r) => r.action === RECOVERED_ACTION && r.meta['route'] === 'POST /v1/agents');
  // SQLite records the dead process's markers at start; Postgres (other replicas may be mid-request)
  // only once they are older than the stale age (60 s): until then the marker itself stands for it.
  const pending = await markers();
  const actions = [...new Set(records.map((r) => r.action))].join(', ');
  const recoveries = JSON.stringify(records.filter((r) => r.action === RECOVERED_ACTION).map((r) => r.meta));
  assert.ok(
    withoutRecord.length <= recovered.length + pending,
    `${withoutRecord.length} stored agents without agent.create (${withoutRecord.map((a) => a.name).join(', ')}), ` +
      `${recovered.length} recovery records, ${pending} markers pending; actions: ${actions}; recoveries: ${recoveries}`,
  );
  for (const a of withoutRecord) assert.ok(out.unanswered.includes(a.name), `${a.name} committed without a record was never acknowledged`);
  const verify = await call(server, 'GET', '/v1/audit/verify', { headers });
  assert.equal(verify.status, 200, verify.text);
  assert.equal(verify.json().ok, true, verify.text);
}

const backends = selectedBackends();
const pg = await pgTestDsn();
const cases: Array<{ backend: string; skip: string | undefined; args: (db: TempDatabase | undefined) => string[] }> = [];
if (backends.has('sqlite')) cases.push({ backend: 'sqlite', skip: undefined, args: () => [] });
if (backends.has('postgres'))
  cases.push({ backend: 'postgres', skip: pg.skip, args: (db) => ['--store', 'postgres', '--dsn', (db as TempDatabase).dsn] });

for (const c of cases) {
  describe(`${c.backend}: kill -9 under an audited-write load`, { skip: c.skip }, () => {
    test('every 201 survives with its record; no record without its change; the chain verifies', async (t) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-kill-'));
      const db = c.backend === 'postgres' ? await createTempDatabase(pg.dsn as string) : undefined;
      t.after(async () => {
        rmSync(dataDir, { recursive: true, force: true });
        await db?.drop();
      });
      // No checkpoint timer: the stale-marker recovery runs at start only (markers of the killed process).
      const opts: StartOptions = {
        dataDir,
        args: c.args(db),
        env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0', SERVICE_RATE_LIMIT_RPS: '0' },
        timeoutMs: 120_000,
      };
      const first = await startServer(opts);
      let token: string;
      let tenant: string;
      let out: Outcome;
      try {
        ({ tenant, token } = await setupAndLogin(first, ADMIN));
        out = await loadAndKill(first, token, tenant);
      } finally {
        await first.stop('SIGKILL');
      }
      assert.ok(out.acked.size >= MIN_ACKS, `acknowledged ${out.acked.size}`);
      assert.ok(out.refused.length > 0, 'some duplicates were refused under load');
      const markers = async (): Promise<number> => {
        const q = "select count(distinct scope) as n from audit_intents where route = 'POST /v1/agents'";
        if (db !== undefined) return Number((await pgQuery<{ n: string }>(db.dsn, q))[0]?.n ?? 0);
        const file = new BetterSqlite3(path.join(dataDir, 'svc.db'), { readonly: true });
        try {
          return Number((file.prepare(q).get() as { n: number }).n);
        } finally {
          file.close();
        }
      };
      const second = await startServer(opts);
      try {
        // The restart's recovery of the killed process's markers runs in the background at start.
        const deadline = Date.now() + 20_000;
        for (;;) {
          try {
            await check(second, token, tenant, out, markers);
            break;
          } catch (err) {
            if (Date.now() > deadline) throw err;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      } finally {
        await second.stop();
      }
    });
  });
}

/**
 * Issue 48 item 8, on both stores through the real `svc serve`: a tenant chain damaged in the
 * database while the server was stopped (its last record deleted, or its head's hash flipped) is
 * still read. `GET /v1/audit` answers what is stored and says the chain is damaged (its own
 * `audit.read` record goes to the system chain, since the damaged one refuses appends);
 * `svc audit verify --strict` names the first bad seq and exits 7; an append to the damaged chain is
 * refused with 503 `audit_chain_damaged`, not a 500.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';
import { SQLITE_FILE_NAME } from '../../../src/store/sqlite/sqlite-store.js';
import { createTempDatabase, pgTestDsn } from '../../helpers/pg.js';
import { call, setupAndLogin, startServer, type TestServer } from '../../helpers/server.js';
import { jsonOut, runSvc, tempDir } from '../../cli/harness.js';
import pg from 'pg';

const ADMIN = {
  email: 'root@example.test',
  password: 'correct horse battery staple',
};

/** Owner SQL on the stopped server's store, with the ledger's append-only triggers off (the attacker with file or database access). */
type Tamper = (sql: { sqlite: string; postgres: string }, params: unknown[]) => Promise<void>;

function sqliteTamper(dataDir: string): Tamper {
  return async (s, params) => {
    const db = new Database(join(dataDir, SQLITE_FILE_NAME));
    try {
      for (const t of ['audit_records_no_delete', 'audit_records_no_update', 'audit_heads_forward_update'])
        db.exec(`drop trigger if exists ${t}`);
      db.prepare(s.sqlite).run(...params);
    } finally {
      db.close();
    }
  };
}

function pgTamper(dsn: string): Tamper {
  return async (s, params) => {
    const c = new pg.Client({ connectionString: dsn });
    await c.connect();
    try {
      await c.query('alter table audit_records disable trigger user');
      await c.query('alter table audit_heads disable trigger user');
      await c.query(s.postgres, params);
      await c.query('alter table audit_records enable trigger user');
      await c.query('alter table audit_heads enable trigger user');
    } finally {
      await c.end();
    }
  };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a damaged chain is read, verify names the bad seq (exit 7), appends are refused with 503`, async (t) => {
    const storeArgs: string[] = [];
    const dataDir = tempDir('svc-damaged-chain-');
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    let tamper: Tamper = sqliteTamper(dataDir);
    if (backend === 'postgres') {
      const target = await pgTestDsn();
      if (target.skip !== undefined) return t.skip(target.skip);
      const db = await createTempDatabase(target.dsn);
      t.after(() => db.drop());
      storeArgs.push('--store', 'postgres', '--dsn', db.dsn);
      tamper = pgTamper(db.dsn);
    }
    const start = () =>
      startServer({
        dataDir,
        args: storeArgs,
        env: {
          SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0',
          SERVICE_RATE_LIMIT_RPS: '0',
        },
      });
    let server: TestServer = await start();
    t.after(() => server.stop());
    const { tenant, token } = await setupAndLogin(server, ADMIN);
    const headers = {
      authorization: `Bearer ${token}`,
      'x-service-tenant': tenant,
    };
    const get = (p: string) => call(server, 'GET', p, { headers });
    for (let i = 0; i < 4; i++) assert.equal((await get('/v1/audit?limit=5')).status, 200);
    const key = (await get('/v1/audit/pubkey')).json().keys[0] as {
      algorithm: string;
      public_key: string;
    };
    const caFile = join(dataDir, 'ca.pem');

    const verifyCli = async () => {
      writeFileSync(caFile, server.certPem as string);
      const run = await runSvc(
        [
          'audit',
          'verify',
          '--server',
          server.url,
          '--ca-cert',
          caFile,
          '--token',
          token,
          '--tenant',
          tenant,
          '--pubkey',
          `${key.algorithm}:${key.public_key}`,
          '--strict',
          '-o',
          'json',
        ],
        { timeoutMs: 60_000 },
      );
      return { code: run.code, report: jsonOut(run), stderr: run.stderr };
    };
    const intact = await verifyCli();
    assert.equal(intact.code, 0, intact.stderr);
    // The page's head is the chain before this read; the read's own audit.read record comes next and is the last.
    const last = ((await get('/v1/audit?limit=1000')).json().head_seq as number) + 1;
    assert.ok(last >= 5);

    /** Damage the chain while stopped, restart, and check every read path. */
    const damaged = async (reason: string, breakAt: number) => {
      const page = await get('/v1/audit?limit=5');
      assert.equal(page.status, 200, page.text);
      const body = page.json();
      assert.equal(body.items.length, 5);
      assert.match(String(body.damaged), /cannot be appended to/);
      const verify = (await get('/v1/audit/verify')).json();
      assert.deepEqual([verify.chain.reason, verify.chain.break_at], [reason, breakAt]);
      const cli = await verifyCli();
      assert.equal(cli.code, 7, `${JSON.stringify(cli.report)}\n${cli.stderr}`);
      assert.deepEqual([cli.report.chain.reason, cli.report.chain.break_at], [reason, breakAt]);
      // The reads were recorded, on the system chain, naming the chain they read.
      const system = await call(server, 'GET', '/v1/audit/system?limit=1000&action=audit.read', {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(system.status, 200, system.text);
      const reads = (system.json().items as Array<{ target_id: string; meta: string }>).filter(
        (r) => r.target_id === tenant && (JSON.parse(r.meta) as { chain_damaged?: string }).chain_damaged !== undefined,
      );
      assert.ok(reads.length >= 2, `${reads.length} audit.read records of the damaged chain on the system chain`);
      // An audited change in the damaged tenant is refused before it commits, with a clear code.
      const made = await call(server, 'POST', '/v1/agents', {
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `agent-${reason}` }),
      });
      assert.equal(made.status, 503, made.text);
      assert.equal(made.json().error.code, 'audit_chain_damaged');
    };

    // 1. The last record deleted: the head names a seq that is not stored (tail-truncated).
    assert.equal(await server.stop(), 0);
    await tamper(
      {
        sqlite: `delete from audit_records where pos = (select (chain << 40) | seq from audit_heads where tenant_id = ?)`,
        postgres: 'delete from audit_records where tenant_id = $1 and seq = (select seq from audit_heads where tenant_id = $1)',
      },
      [tenant],
    );
    server = await start();
    await damaged('tail-truncated', last);

    // 2. The head moved back onto the last stored record with a flipped hash (hash-mismatch there).
    assert.equal(await server.stop(), 0);
    await tamper(
      {
        sqlite: `update audit_heads set seq = seq - 1, hash = zeroblob(32) where tenant_id = ?`,
        postgres: `update audit_heads set seq = seq - 1, hash = decode(repeat('00', 32), 'hex') where tenant_id = $1`,
      },
      [tenant],
    );
    server = await start();
    await damaged('hash-mismatch', last - 1);

    // 3. The system chain damaged as well: both chains are still read, with nowhere to record the reads.
    assert.equal(await server.stop(), 0);
    await tamper(
      {
        sqlite: `update audit_heads set hash = zeroblob(32) where tenant_id = ?`,
        postgres: `update audit_heads set hash = decode(repeat('00', 32), 'hex') where tenant_id = $1`,
      },
      [SYSTEM_TENANT],
    );
    server = await start();
    const tenantPage = await get('/v1/audit?limit=5');
    assert.equal(tenantPage.status, 200, tenantPage.text);
    assert.match(String(tenantPage.json().damaged), /cannot be appended to/);
    const systemPage = await call(server, 'GET', '/v1/audit/system?limit=5', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(systemPage.status, 200, systemPage.text);
    assert.match(String(systemPage.json().damaged), new RegExp(`audit chain ${SYSTEM_TENANT} cannot be appended to`));
  });
}

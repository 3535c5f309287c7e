/**
 * Through the real `svc serve`: every audited mutating route commits its audit record together
 * with the deletion of its change markers (ledger/audit-intent.ts), so a run of ordinary requests,
 * successful and refused, leaves no marker and no `audit.recovered_after_failure` record.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { RECOVERED_ACTION } from '../../src/ledger/audit-intent.js';
import { call, setupAndLogin, startServer, type TestServer } from '../helpers/server.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

describe('audit intents through svc serve', () => {
  let server: TestServer;
  let token: string;
  let tenant: string;
  const send = (method: string, p: string, body?: unknown) =>
    call(server, method, p, {
      headers: { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  before(async () => {
    server = await startServer({ env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0' } });
    ({ tenant, token } = await setupAndLogin(server, ADMIN));
  });
  after(async () => {
    await server?.stop();
  });

  test('ordinary mutations, accepted and refused, leave no marker and need no recovery record', async () => {
    const agent = await send('POST', '/v1/agents', { name: 'triage-bot', external_id: 'ext-1' });
    assert.equal(agent.status, 201, agent.text);
    const id = agent.json().id as string;
    assert.equal((await send('POST', '/v1/agents', { name: 'dup', external_id: 'ext-1' })).status, 409);
    assert.equal((await send('PATCH', `/v1/agents/${id}`, { version: 1, labels: { team: 'sec' } })).status, 200);
    assert.equal((await send('PATCH', `/v1/agents/${id}`, { version: 1, name: 'stale' })).status, 409);
    const ws = await send('POST', '/v1/workspaces', { root_path: '/srv/repo' });
    assert.equal(ws.status, 201, ws.text);
    assert.equal((await send('PATCH', `/v1/workspaces/${ws.json().id as string}`, { version: 1, dlp_posture: 'deny' })).status, 200);
    const tok = await send('POST', '/v1/tokens', { role: 'editor', name: 'ci' });
    assert.equal(tok.status, 201, tok.text);
    const tokId = tok.json().id as string;
    assert.equal((await send('POST', `/v1/tokens/${tokId}/rotate`)).status, 201);
    assert.equal(
      (await send('POST', '/v1/m/accessmap/nodes', { nodes: [{ kind: 'resource', ref: 'git://acme/app', class: 'code' }] })).status,
      200,
    );
    assert.equal(
      (
        await send('POST', '/v1/m/accessmap/grants', {
          grants: [{ origin: { kind: 'agent', id }, resource: { ref: 'git://acme/app' }, mode: 'r', source: 'iam' }],
        })
      ).status,
      200,
    );
    const obs = await send('POST', '/v1/m/accessmap/observations', {
      observations: [
        { origin: { kind: 'agent', id }, resource: { ref: 'git://acme/app' }, mode: 'rw', confidence: 'high', signal_source: 'test' },
      ],
    });
    assert.equal(obs.status, 200, obs.text);
    assert.equal((await send('DELETE', `/v1/agents/${id}?version=2`)).status, 204);

    const db = new BetterSqlite3(path.join(server.dataDir, 'svc.db'), { readonly: true });
    try {
      // The last audit append has resolved before each answer, so nothing is left in between.
      assert.deepEqual(db.prepare('select route, request_id from audit_intents').all(), [], 'no change without its record');
    } finally {
      db.close();
    }
    for (const p of ['/v1/audit?limit=1000', '/v1/audit/system?limit=1000']) {
      const page = await send('GET', p);
      assert.equal(page.status, 200, page.text);
      const actions = (page.json().items as Array<{ action: string }>).map((r) => r.action);
      assert.ok(!actions.includes(RECOVERED_ACTION), `${p}: ${actions.join(', ')}`);
      assert.ok(actions.length > 3);
    }
  });
});

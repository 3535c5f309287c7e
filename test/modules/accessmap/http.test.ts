/**
 * The accessmap area over HTTPS against the real `svc serve` with the real authenticator and the
 * durable ledger: the privileged-read rule (viewer 403; editor 200 and exactly one ledger record),
 * permissions of the write paths, tenant isolation (404, never 403), and the contract documents.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let owner: string;
let tenant: string;
let otherTenant: string;
let viewer: string;
let editor: string;

const send = (token: string, method: string, path: string, body?: unknown, tenantId = tenant) =>
  call(server, method, path, {
    headers: {
      authorization: `Bearer ${token}`,
      'x-service-tenant': tenantId,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

async function auditCount(action: string, tenantId = tenant): Promise<number> {
  const res = await send(owner, 'GET', `/v1/audit?action=${encodeURIComponent(action)}&limit=1000`, undefined, tenantId);
  assert.equal(res.status, 200, res.text);
  return (res.json().items as Array<{ action: string }>).filter((r) => r.action === action).length;
}

before(async () => {
  server = await startServer();
  const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
  const setup = await call(server, 'POST', '/v1/setup', {
    body: JSON.stringify({ token, email: 'owner@example.test', password: 'owner password 123', organization: 'Acme' }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(setup.status, 201, setup.text);
  tenant = setup.json().organization.id;
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: 'owner@example.test', password: 'owner password 123' }),
    headers: { 'content-type': 'application/json' },
  });
  owner = login.json().token;
  const issue = async (role: string) => {
    const res = await send(owner, 'POST', '/v1/tokens', { name: role, role, tenant });
    assert.equal(res.status, 201, res.text);
    return res.json().token as string;
  };
  viewer = await issue('viewer');
  editor = await issue('editor');
  const org = await send(owner, 'POST', '/v1/system/orgs', { name: 'Other' });
  assert.equal(org.status, 201, org.text);
  otherTenant = org.json().id;
});
after(async () => server?.stop());

describe('accessmap over HTTPS', () => {
  let agentId: string;

  it('agents: editor creates (201, audited), viewer reads but cannot write, PATCH needs the current version', async () => {
    const created = await send(editor, 'POST', '/v1/agents', { name: 'coder', external_id: 'cc-1', labels: { team: 'infra' } });
    assert.equal(created.status, 201, created.text);
    agentId = created.json().id;
    assert.equal((await send(viewer, 'POST', '/v1/agents', { name: 'nope' })).status, 403);
    assert.equal((await send(viewer, 'GET', `/v1/agents/${agentId}`)).json().name, 'coder');
    const patched = await send(editor, 'PATCH', `/v1/agents/${agentId}`, { version: 1, labels: { team: null, tier: 'gold' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json().labels, { tier: 'gold' });
    const stale = await send(editor, 'PATCH', `/v1/agents/${agentId}`, { version: 1, name: 'x' });
    assert.deepEqual([stale.status, stale.json().error.code], [409, 'conflict']);
    assert.equal(await auditCount('agent.create'), 1);
    assert.equal(await auditCount('agent.update'), 1);
    const unknownField = await send(editor, 'POST', '/v1/agents', { name: 'x', colour: 'red' });
    assert.equal(unknownField.status, 400);
  });

  it('write paths: grants need editor, observations need ingest:write (admin and above)', async () => {
    const grant = {
      grants: [{ origin: { kind: 'agent', id: agentId }, resource: { ref: 's3://payroll', class: 'data' }, mode: 'r', source: 'iam' }],
    };
    assert.equal((await send(viewer, 'POST', '/v1/m/accessmap/grants', grant)).status, 403);
    const g = await send(editor, 'POST', '/v1/m/accessmap/grants', grant);
    assert.deepEqual([g.status, g.json()], [200, { accepted: 1, edges: 1 }]);
    const observation = {
      observations: [
        {
          origin: { kind: 'agent', ref: 'cc-1' },
          resource: { ref: 's3://secrets' },
          mode: 'rw',
          confidence: 'high',
          signal_source: 'cloudtrail',
        },
      ],
    };
    assert.equal((await send(editor, 'POST', '/v1/m/accessmap/observations', observation)).status, 403);
    const o = await send(owner, 'POST', '/v1/m/accessmap/observations', observation);
    assert.deepEqual([o.status, o.json()], [200, { accepted: 1, edges: 1 }]);
  });

  it('privileged reads: viewer 403; editor 200 with exactly one ledger record per read', async () => {
    const reads: Array<[string, string]> = [
      ['/v1/m/accessmap/graph?limit=0', 'accessmap.graph.read'],
      ['/v1/m/accessmap/drift', 'accessmap.drift.read'],
      [`/v1/m/accessmap/neighbors?id=${agentId}`, 'accessmap.neighbors.read'],
      [`/v1/m/accessmap/attack-paths/escalation?agent_id=${agentId}`, 'accessmap.attack_paths.escalation.read'],
      [`/v1/m/accessmap/attack-paths/reachability?agent_id=${agentId}`, 'accessmap.attack_paths.reachability.read'],
      ['/v1/m/accessmap/attack-paths/summary', 'accessmap.attack_paths.summary.read'],
      ['/v1/access-edges', 'access_edges.read'],
    ];
    for (const [path, action] of reads) {
      const denied = await send(viewer, 'GET', path);
      assert.deepEqual([denied.status, denied.json().error.code], [403, 'forbidden'], path);
      const before = await auditCount(action);
      const ok = await send(editor, 'GET', path);
      assert.equal(ok.status, 200, `${path}: ${ok.text}`);
      assert.equal(await auditCount(action), before + 1, `${path}: one record per read`);
    }
    const drift = (await send(editor, 'GET', '/v1/m/accessmap/drift')).json();
    assert.deepEqual(drift.items.map((d: { resource_name: string; drift: string }) => `${d.resource_name}:${d.drift}`).sort(), [
      's3://payroll:unused',
      's3://secrets:unexpected',
    ]);
    const graph = (await send(editor, 'GET', '/v1/m/accessmap/graph?mode=rw&confidence=high')).json();
    assert.deepEqual(graph.items.map((e: { resource_name: string }) => e.resource_name), ['s3://secrets']);
    assert.equal((await send(editor, 'GET', '/v1/m/accessmap/graph?limit=1001')).status, 400);
    assert.equal((await send(editor, 'GET', '/v1/m/accessmap/graph?origin_kind=robot')).status, 400);
  });

  it('attack-path searches are bounded by a work budget and say whether they completed', async () => {
    const reach = (q: string) => send(editor, 'GET', `/v1/m/accessmap/attack-paths/reachability?agent_id=${agentId}${q}`);
    const full = (await reach('')).json();
    assert.deepEqual(
      [full.complete, full.truncated, full.total, full.total_at_least, full.examined],
      [true, false, 2, undefined, { edges: 2, budget: 10_000 }],
    );
    const cut = (await reach('&budget=1')).json();
    assert.deepEqual(
      [cut.complete, cut.truncated, cut.total, cut.total_at_least, cut.examined, cut.items.length],
      [false, true, undefined, 1, { edges: 1, budget: 1 }, 1],
    );
    assert.equal((await reach('&budget=0')).status, 400);
    assert.equal((await reach('&budget=2000001')).status, 400);
    const esc = (await send(editor, 'GET', `/v1/m/accessmap/attack-paths/escalation?agent_id=${agentId}&budget=1`)).json();
    assert.equal(esc.complete, false);
  });

  it('tenant isolation: another tenant sees no edges and gets 404 for this tenant’s agent', async () => {
    assert.equal((await send(owner, 'GET', `/v1/agents/${agentId}`, undefined, otherTenant)).status, 404);
    assert.equal((await send(owner, 'GET', `/v1/m/accessmap/neighbors?id=${agentId}`, undefined, otherTenant)).status, 404);
    assert.equal(
      (await send(owner, 'GET', `/v1/m/accessmap/attack-paths/reachability?agent_id=${agentId}`, undefined, otherTenant)).status,
      404,
    );
    assert.deepEqual((await send(owner, 'GET', '/v1/m/accessmap/graph', undefined, otherTenant)).json().items, []);
    assert.equal((await send(owner, 'PATCH', `/v1/agents/${agentId}`, { version: 2, name: 'stolen' }, otherTenant)).status, 404);
  });

  it('workspaces and search', async () => {
    const ws = await send(editor, 'POST', '/v1/workspaces', { root_path: '/srv/payments' });
    assert.equal(ws.status, 201, ws.text);
    assert.deepEqual(
      [ws.json().mount_mode, ws.json().dlp_posture, ws.json().effective_read_cap_bytes, ws.json().mount_target],
      ['rw', 'label', 5242880, '/workspace'],
    );
    const asViewer = (await send(viewer, 'GET', '/v1/search?q=pay')).json();
    assert.deepEqual(asViewer.kinds, ['agent', 'workspace'], 'graph nodes are a privileged read');
    assert.deepEqual(asViewer.items.map((i: { kind: string }) => i.kind), ['workspace']);
    const asEditor = (await send(editor, 'GET', '/v1/search?q=pay')).json();
    assert.deepEqual(
      asEditor.items.map((i: { kind: string; name: string }) => `${i.kind}:${i.name}`),
      ['workspace:payments', 'resource:s3://payroll'],
    );
  });

  it('contract documents list the routes: core in /openapi.json, module routes in /openapi.beta.json', async () => {
    const core = (await call(server, 'GET', '/openapi.json')).json();
    for (const p of ['/v1/agents', '/v1/agents/{id}', '/v1/access-edges', '/v1/workspaces', '/v1/workspaces/{id}', '/v1/search'])
      assert.ok(core.paths[p], p);
    const beta = (await call(server, 'GET', '/openapi.beta.json')).json();
    for (const p of [
      'graph',
      'drift',
      'neighbors',
      'attack-paths/escalation',
      'attack-paths/exfil',
      'attack-paths/reachability',
      'attack-paths/summary',
    ])
      assert.ok(beta.paths[`/v1/m/accessmap/${p}`], p);
    for (const p of ['escalation', 'exfil', 'reachability']) {
      const op = beta.paths[`/v1/m/accessmap/attack-paths/${p}`].get;
      assert.ok(op.parameters.some((q: { name: string }) => q.name === 'budget'), `${p}: budget`);
      assert.ok(JSON.stringify(op.responses).includes('"complete"'), `${p}: complete`);
    }
  });

  it(
    'ids are case-insensitive on input: an uppercase id in a path, a filter or a body finds the lowercase one, and only lowercase is ' +
      'stored or answered',
    async () => {
      const created = await send(editor, 'POST', '/v1/agents', { name: 'upper-case-caller' });
      const id = created.json().id as string;
      const upper = id.toUpperCase();
      assert.notEqual(upper, id);
      const got = await send(editor, 'GET', `/v1/agents/${upper}`);
      assert.deepEqual([got.status, got.json().id], [200, id], got.text);
      const observed = await send(owner, 'POST', '/v1/m/accessmap/observations', {
        observations: [
          { origin: { kind: 'agent', id: upper }, resource: { ref: 's3://upper' }, mode: 'r', confidence: 'high', signal_source: 'test' },
        ],
      });
      assert.deepEqual([observed.status, observed.json()], [200, { accepted: 1, edges: 1 }], observed.text);
      const byUpper = (await send(editor, 'GET', `/v1/m/accessmap/graph?origin_id=${upper}`)).json();
      const byLower = (await send(editor, 'GET', `/v1/m/accessmap/graph?origin_id=${id}`)).json();
      assert.deepEqual(
        byUpper.items.map((e: { origin_id: string; resource_name: string }) => `${e.origin_id} ${e.resource_name}`),
        [`${id} s3://upper`],
      );
      assert.deepEqual(byUpper, byLower);
      const near = await send(editor, 'GET', `/v1/m/accessmap/neighbors?id=${upper}`);
      assert.deepEqual([near.status, near.json().node.id], [200, id], near.text);
      const patched = await send(editor, 'PATCH', `/v1/agents/${upper}`, { version: 1, name: 'renamed' });
      assert.deepEqual([patched.status, patched.json().id, patched.json().name], [200, id, 'renamed'], patched.text);
      const audit = await send(owner, 'GET', '/v1/audit?action=agent.update&limit=1000');
      assert.ok(audit.text.includes(id), 'the ledger names the agent');
      assert.ok(!audit.text.includes(upper), 'and only in lowercase');
    },
  );

  it(
    'a lone surrogate in a body is a 400 naming the field; nothing is stored and the ledger keeps going (was a 500 from the ledger ' +
      'hash)',
    async () => {
      const before = (await send(editor, 'GET', '/v1/agents?limit=200')).json().items.length as number;
      const bad = await send(editor, 'POST', '/v1/agents', { name: 'half \ud800 a pair' });
      assert.deepEqual([bad.status, bad.json().error.code], [400, 'bad_request'], bad.text);
      assert.match(bad.json().error.message, /\/name holds a lone UTF-16 surrogate/);
      assert.equal((await send(editor, 'GET', '/v1/agents?limit=200')).json().items.length, before);
      const next = await send(editor, 'POST', '/v1/agents', { name: 'whole 🤖 pair' });
      assert.deepEqual([next.status, next.json().name], [201, 'whole 🤖 pair'], next.text);
    },
  );
});

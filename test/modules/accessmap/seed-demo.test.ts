/** `svc serve --seed-demo`: the demo administrator logs in and sees a non-empty graph with drift and attack paths at once. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { call, startServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer({ args: ['--seed-demo'] });
});
after(async () => server?.stop());

it('seeds a plausible estate: agents, edges, both kinds of drift, escalation paths', async () => {
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: 'admin@demo.local', password: 'demo-password-1234' }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(login.status, 200, login.text);
  const headers = { authorization: `Bearer ${login.json().token}` };
  const agents = (await call(server, 'GET', '/v1/agents?limit=100', { headers })).json();
  assert.ok(agents.items.length >= 20, `agents: ${agents.items.length}`);
  const summary = (await call(server, 'GET', '/v1/m/accessmap/attack-paths/summary', { headers })).json();
  assert.ok(summary.edges.total >= 80, JSON.stringify(summary.edges));
  assert.ok(summary.drift.unexpected > 0 && summary.drift.unused > 0, JSON.stringify(summary.drift));
  assert.ok(summary.nodes.sessions >= 30 && summary.nodes.identities >= 8 && summary.nodes.resources >= 20);
  assert.ok(summary.escalation.agents_with_paths > 0, 'some agent has an escalation path');
  const release = agents.items.find((a: { name: string }) => a.name === 'release-bot');
  const esc = (await call(server, 'GET', `/v1/m/accessmap/attack-paths/escalation?agent_id=${release.id}`, { headers })).json();
  assert.deepEqual(esc.targets.slice(0, 2).map((t: { target: { name: string } }) => t.target.name), ['ci-deployer', 'k8s-cluster-admin']);
  const shared = (await call(server, 'GET', '/v1/m/accessmap/drift?origin_kind=identity&drift=unexpected', { headers })).json();
  assert.ok(
    shared.items.some(
      (d: { origin_name: string; drift_confidence: string }) => d.origin_name === 'etl-shared-svc' && d.drift_confidence === 'low',
    ),
  );
});

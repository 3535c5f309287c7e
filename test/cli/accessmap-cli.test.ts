/** `svc agent …` and `svc accessmap …` the way users run them: the built binary against `svc serve --seed-demo` over HTTPS. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { jsonOut, runSvc } from './harness.js';

let server: TestServer;
let base: string[];

before(async () => {
  server = await startServer({ args: ['--seed-demo'] });
  const caPath = join(tempDir('svc-am-cli-'), 'ca.pem');
  writeFileSync(caPath, server.certPem as string);
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: 'admin@demo.local', password: 'demo-password-1234' }),
    headers: { 'content-type': 'application/json' },
  });
  base = ['--server', server.url, '--ca-cert', caPath, '--token', login.json().token];
});
after(async () => server?.stop());

describe('svc agent and svc accessmap against a seeded server', () => {
  it('agent create → get → update (merge, version guard) → rm', async () => {
    const created = await runSvc([
      'agent',
      'create',
      ...base,
      '--name',
      'cli-agent',
      '--label',
      'team=cli',
      '--label',
      'tier=1',
      '-o',
      'json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const a = jsonOut(created);
    assert.deepEqual(a.labels, { team: 'cli', tier: '1' });
    const updated = await runSvc(['agent', 'update', a.id, ...base, '--status', 'paused', '--unlabel', 'tier', '-o', 'json']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual([jsonOut(updated).status, jsonOut(updated).labels, jsonOut(updated).version], ['paused', { team: 'cli' }, 2]);
    const stale = await runSvc(['agent', 'update', a.id, ...base, '--version', '1', '--name', 'x', '-o', 'json']);
    assert.equal(stale.code, 5, 'a stale version is a conflict: exit 5');
    assert.equal(jsonOut(stale).error.http_status, 409);
    const text = await runSvc(['agent', 'get', a.id, ...base]);
    assert.match(text.stdout, /^status:\s+paused$/m);
    const refused = await runSvc(['agent', 'rm', a.id, ...base]);
    assert.notEqual(refused.code, 0, 'rm without -y in a non-interactive session is refused');
    assert.equal((await runSvc(['agent', 'rm', a.id, ...base, '-y'])).code, 0);
    const gone = await runSvc(['agent', 'get', a.id, ...base, '-o', 'json']);
    assert.equal(gone.code, 4);
  });

  it('agent ls pages with a cursor; text output is a table', async () => {
    const p1 = jsonOut(await runSvc(['agent', 'ls', ...base, '--limit', '5', '-o', 'json']));
    assert.equal(p1.items.length, 5);
    assert.equal(p1.has_more, true);
    const p2 = jsonOut(await runSvc(['agent', 'ls', ...base, '--limit', '5', '--cursor', p1.cursor, '-o', 'json']));
    assert.ok(p2.items[0].id > p1.items[4].id);
    const table = await runSvc(['agent', 'ls', ...base, '--limit', '3']);
    assert.match(table.stdout, /^ID\s+NAME\s+KIND\s+STATUS/m);
    assert.match(table.stdout, /more: --cursor /);
  });

  it('accessmap graph, drift, neighbors and attack paths with -o json and text', async () => {
    const summary = jsonOut(await runSvc(['accessmap', 'attack-paths', 'summary', ...base, '-o', 'json']));
    assert.ok(summary.edges.total > 0);
    const unused = jsonOut(await runSvc(['accessmap', 'drift', ...base, '--kind', 'unused', '--limit', '0', '-o', 'json']));
    assert.ok(
      unused.items.length > 0 &&
        unused.items.every((d: { drift: string; drift_confidence: string }) => d.drift === 'unused' && d.drift_confidence !== 'high'),
    );
    const rw = jsonOut(await runSvc(['accessmap', 'graph', ...base, '--mode', 'rw', '-o', 'json']));
    assert.ok(rw.items.every((e: { mode: string }) => e.mode === 'rw'));
    const agents = jsonOut(await runSvc(['agent', 'ls', ...base, '--limit', '100', '-o', 'json'])).items as Array<{
      id: string;
      name: string;
    }>;
    const release = agents.find((x) => x.name === 'release-bot') as { id: string };
    const esc = await runSvc(['accessmap', 'attack-paths', 'escalation', ...base, '--agent-id', release.id]);
    assert.equal(esc.code, 0, esc.stderr);
    assert.match(esc.stdout, /release-bot =writes\(rw\)=> ci-deployer/);
    const reach = jsonOut(await runSvc(['accessmap', 'attack-paths', 'reachability', ...base, '--agent-id', release.id, '-o', 'json']));
    const target = reach.items.find((i: { resource: { name: string } }) => i.resource.name === 'k8s://prod/configmap/payments');
    assert.ok(target, 'the deploy chain reaches the prod configmap');
    const exfil = jsonOut(await runSvc(['accessmap', 'attack-paths', 'exfil', ...base, '--resource-id', target.resource.id, '-o', 'json']));
    assert.ok(exfil.items.some((i: { principal: { name: string } }) => i.principal.name === 'release-bot'));
    const nb = jsonOut(await runSvc(['accessmap', 'neighbors', ...base, '--id', release.id, '-o', 'json']));
    assert.equal(nb.node.name, 'release-bot');
    const bad = await runSvc(['accessmap', 'graph', ...base, '--mode', 'x', '-o', 'json']);
    assert.equal(bad.code, 1, 'a 400 from the server is a generic failure');
    assert.equal(jsonOut(bad).error.http_status, 400);
    const cut = await runSvc(['accessmap', 'attack-paths', 'reachability', ...base, '--agent-id', release.id, '--budget', '1']);
    assert.equal(cut.code, 0, cut.stderr);
    assert.match(cut.stdout, /total: at least \d+ \(truncated: search stopped, 1 edges examined of a budget of 1/);
    assert.equal(reach.complete, true);
    const missing = await runSvc(['accessmap', 'attack-paths', 'escalation', ...base]);
    assert.equal(missing.code, 2, '--agent-id is required: usage error');
  });
});

/**
 * Issue 30 item 15: names and external ids wherever the CLI takes an agent, resource or workspace
 * id (ambiguity: exit 2 listing the matches), `svc search`, `svc workspace ls|get|create|update`,
 * and a bad id as one line. Against the real server's demo estate (`svc serve --seed-demo`).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

describe('names where ids are taken', () => {
  let server: TestServer;
  let env: Record<string, string>;
  const svc = (args: string[]) => runSvc(args, { env });
  const oneLine = (stderr: string) => assert.equal(stderr.split('\n').filter(Boolean).length, 1, stderr);

  before(async () => {
    server = await startServer({ args: ['--seed-demo'], timeoutMs: 60_000 });
    env = { SERVICE_CONFIG: join(tempDir('svc-names-'), 'config.yaml') };
    const login = await runSvc(
      [
        'auth',
        'login',
        '--server',
        server.url,
        '--pin-sha256',
        String(server.pinSha256),
        '--email',
        'admin@demo.local',
        '--password',
        'demo-password-1234',
      ],
      { env },
    );
    assert.equal(login.code, 0, login.stderr);
  });
  after(async () => {
    await server?.stop();
  });

  it('svc search finds agents, workspaces and graph nodes by name or key', async () => {
    const run = await svc(['search', 'payments', '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const hits = jsonOut(run).items as Array<{ kind: string; name: string; detail: string; id: string }>;
    assert.ok(hits.some((h) => h.kind === 'agent' && h.name === 'payments-copilot'));
    assert.ok(hits.some((h) => h.kind === 'workspace' && h.name === 'payments-service'));
    assert.ok(hits.some((h) => h.kind === 'resource' && h.detail === 'pg://prod/payments'));
    const text = await svc(['search', 'payments']);
    assert.match(text.stdout, /^KIND\s+NAME\s+KEY\s+ID/m);
  });

  it('agent and resource names and external ids work in agent and accessmap commands', async () => {
    const agent = jsonOut(await svc(['agent', 'get', 'demo-release-bot', '-o', 'json']));
    assert.equal(agent.name, 'release-bot');
    assert.equal(jsonOut(await svc(['agent', 'get', 'release-bot', '-o', 'json'])).id, agent.id);

    const byName = await svc(['accessmap', 'attack-paths', 'reachability', '--agent-id', 'release-bot', '-o', 'json']);
    assert.equal(byName.code, 0, byName.stderr);
    const byId = await svc(['accessmap', 'attack-paths', 'reachability', '--agent-id', agent.id, '-o', 'json']);
    assert.deepEqual(jsonOut(byName).items, jsonOut(byId).items);
    assert.ok(jsonOut(byName).items.length > 0);
    assert.equal((await svc(['accessmap', 'attack-paths', 'escalation', '--agent-id', 'release-bot'])).code, 0);

    const exfil = await svc(['accessmap', 'attack-paths', 'exfil', '--resource-id', 's3://acme-payroll', '-o', 'json']);
    assert.equal(exfil.code, 0, exfil.stderr);
    assert.ok(jsonOut(exfil).items.length > 0);

    const neighbors = await svc(['accessmap', 'neighbors', '--id', 'pg://prod/payments', '-o', 'json']);
    assert.equal(neighbors.code, 0, neighbors.stderr);
    assert.equal(jsonOut(neighbors).node.kind, 'resource');
    const graph = await svc(['accessmap', 'graph', '--origin-id', 'release-bot', '-o', 'json']);
    assert.equal(graph.code, 0, graph.stderr);
    assert.ok(jsonOut(graph).items.every((e: { origin_id: string }) => e.origin_id === agent.id));
  });

  it('an ambiguous name exits 2 listing the matches; an unknown one exits 4; a bad id is one line', async () => {
    const a = jsonOut(await svc(['agent', 'create', '--name', 'twin', '--external-id', 'twin-a', '-o', 'json']));
    const b = jsonOut(await svc(['agent', 'create', '--name', 'twin', '--external-id', 'twin-b', '-o', 'json']));
    const ambiguous = await svc(['agent', 'get', 'twin']);
    assert.equal(ambiguous.code, 2);
    oneLine(ambiguous.stderr);
    assert.ok(ambiguous.stderr.includes(a.id) && ambiguous.stderr.includes(b.id), ambiguous.stderr);
    assert.equal(jsonOut(await svc(['agent', 'get', 'twin-b', '-o', 'json'])).id, b.id, 'the external id still tells them apart');
    assert.equal((await svc(['agent', 'rm', 'twin-a', '-y'])).code, 0);

    const unknown = await svc(['accessmap', 'attack-paths', 'reachability', '--agent-id', 'no-such-agent']);
    assert.equal(unknown.code, 4);
    oneLine(unknown.stderr);
    for (const args of [['users', 'disable', 'abc', '-y'], ['tokens', 'revoke', '1234', '-y'], ['tenants', 'rm', 'beef', '-y']]) {
      const bad = await svc(args);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      oneLine(bad.stderr);
      assert.ok(!/pattern|\^\[0-9a-fA-F\]/.test(bad.stderr), bad.stderr);
    }
  });

  it('svc workspace create, get and update by name, ls', async () => {
    const created = await svc([
      'workspace',
      'create',
      '--root-path',
      '/srv/repos/ledger',
      '--display-name',
      'ledger-repo',
      '--restricted-subpath',
      'secrets',
      '-o',
      'json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const ws = jsonOut(created);
    assert.equal(ws.mount_mode, 'rw');
    assert.deepEqual(ws.restricted_subpaths, ['secrets']);
    assert.equal(jsonOut(await svc(['workspace', 'get', 'ledger-repo', '-o', 'json'])).id, ws.id);
    assert.equal(jsonOut(await svc(['workspace', 'get', '/srv/repos/ledger', '-o', 'json'])).id, ws.id);
    const updated = await svc(['workspace', 'update', 'ledger-repo', '--mount-mode', 'ro', '-o', 'json']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(jsonOut(updated).mount_mode, 'ro');
    assert.equal(jsonOut(updated).version, 2);
    const stale = await svc(['workspace', 'update', ws.id, '--version', '1', '--dlp-posture', 'deny']);
    assert.equal(stale.code, 5, 'a stale version is a conflict');
    const names = jsonOut(await svc(['workspace', 'ls', '-o', 'json'])).items.map((w: { display_name: string }) => w.display_name);
    assert.ok(names.includes('ledger-repo') && names.includes('payments-service'));
  });
});

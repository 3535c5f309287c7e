/**
 * `svc eventing …` the way users run them: the built binary against `svc serve --seed-demo` over HTTPS, deliveries to a loopback receiver.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { startReceiver, verify, waitFor } from '../modules/eventing/harness.js';
import { jsonOut, runSvc } from './harness.js';

let server: TestServer;
let base: string[];
let rx: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  server = await startServer({ args: ['--seed-demo'], env: { SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' } });
  rx = await startReceiver((p, n) => (p === '/dead' ? 500 : n > 0 ? 200 : 200));
  const caPath = join(tempDir('svc-ev-cli-'), 'ca.pem');
  writeFileSync(caPath, server.certPem as string);
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: 'admin@demo.local', password: 'demo-password-1234' }),
    headers: { 'content-type': 'application/json' },
  });
  base = ['--server', server.url, '--ca-cert', caPath, '--token', login.json().token];
});
after(async () => {
  await rx?.close();
  await server?.stop();
});

describe('svc eventing against a real server', () => {
  it('subscriptions create (secret printed once) → get → ls → update → test → replay → rotate-secret → rm, by id or name', async () => {
    const created = await runSvc([
      'eventing',
      'subscriptions',
      'create',
      ...base,
      '--name',
      'cli-hook',
      '--endpoint',
      rx.url('/cli'),
      '--event-type',
      'agent.created',
      '--sink-format',
      'json',
      '-o',
      'json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const sub = jsonOut(created);
    assert.match(sub.secret, /^whsec_/);
    const text = await runSvc(['eventing', 'subscriptions', 'get', 'cli-hook', ...base]);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(!text.stdout.includes(sub.secret), 'get never shows the secret');
    assert.match(text.stdout, /^endpoint:\s+http:\/\/127\.0\.0\.1/m);
    const ls = jsonOut(await runSvc(['eventing', 'subscriptions', 'ls', ...base, '-o', 'json']));
    assert.ok(ls.items.some((s: { id: string }) => s.id === sub.id));
    const updated = await runSvc(['eventing', 'subscriptions', 'update', 'cli-hook', ...base, '--max-attempts', '3', '-o', 'json']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(jsonOut(updated).retry.max_attempts, 3);
    assert.equal(jsonOut(updated).secret, undefined, 'update never reissues the secret');
    const tested = await runSvc(['eventing', 'subscriptions', 'test', sub.id, ...base, '-o', 'json']);
    assert.equal(tested.code, 0, tested.stderr);
    assert.equal(jsonOut(tested).delivery.status, 'delivered');
    assert.equal(verify(sub.secret, rx.delivered('/cli')[0]!)['type'], 'subscription.tested');
    const agent = jsonOut(await runSvc(['agent', 'create', ...base, '--name', 'cli-evented', '-o', 'json']));
    await waitFor(() => rx.delivered('/cli').length === 2, 10_000, 'the agent event');
    const events = jsonOut(await runSvc(['eventing', 'events', 'ls', ...base, '--type', 'agent.created', '--limit', '1000', '-o', 'json']));
    assert.ok(events.items.some((e: { data: { id: string } }) => e.data.id === agent.id));
    const deliveries = await runSvc(['eventing', 'deliveries', 'ls', ...base, '--subscription', sub.id, '--status', 'delivered']);
    assert.equal(deliveries.code, 0, deliveries.stderr);
    assert.match(deliveries.stdout, /delivered/);
    const event = events.items.find((e: { data: { id: string } }) => e.data.id === agent.id) as { id: string; sequence: string };
    assert.equal((await runSvc(['eventing', 'subscriptions', 'replay', 'cli-hook', ...base, '--from-seq', 'x'])).code, 2);
    const replayed = await runSvc([
      'eventing',
      'subscriptions',
      'replay',
      'cli-hook',
      ...base,
      '--from-seq',
      String(event.sequence),
      '--to-seq',
      String(event.sequence),
      '-o',
      'json',
    ]);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(jsonOut(replayed).queued, 1);
    await waitFor(() => rx.delivered('/cli').length === 3, 10_000, 'the replayed event');
    assert.equal(rx.delivered('/cli')[2]!.id, event.id, 'a replay keeps the event id (the webhook-id)');
    assert.equal((await runSvc(['eventing', 'subscriptions', 'get', 'no-such-hook', ...base])).code, 4);
    const rotated = await runSvc(['eventing', 'subscriptions', 'rotate-secret', sub.id, ...base]);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /signing secret \(shown once, store it now\):\nwhsec_/);
    assert.equal((await runSvc(['eventing', 'subscriptions', 'rm', sub.id, ...base, '-y'])).code, 0);
    assert.equal((await runSvc(['eventing', 'subscriptions', 'get', sub.id, ...base, '-o', 'json'])).code, 4);
  });

  it('dead-letters ls and redeliver', async () => {
    const sub = jsonOut(
      await runSvc([
        'eventing',
        'subscriptions',
        'create',
        ...base,
        '--name',
        'cli-dead',
        '--endpoint',
        rx.url('/dead'),
        '--event-type',
        'agent.created',
        '--max-attempts',
        '1',
        '-o',
        'json',
      ]),
    );
    await runSvc(['agent', 'create', ...base, '--name', 'cli-dead-agent', '-o', 'json']);
    let dead: Array<{ id: string }> = [];
    await waitFor(
      async () =>
        (dead = jsonOut(await runSvc(['eventing', 'dead-letters', 'ls', ...base, '--subscription', sub.id, '-o', 'json'])).items).length ===
        1,
      20_000,
      'a dead letter',
    );
    const again = await runSvc(['eventing', 'dead-letters', 'redeliver', dead[0]!.id, ...base, '-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(jsonOut(again).status, 'queued');
    const bad = await runSvc([
      'eventing',
      'subscriptions',
      'create',
      ...base,
      '--name',
      'x',
      '--endpoint',
      rx.url('/x'),
      '--event-type',
      'agent.created',
      '--sink-format',
      'xml',
      '-o',
      'json',
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(jsonOut(bad).error.message, /accepted: ocsf, cef, leef, syslog, otlp, otlp_envelope, json/);
  });
});

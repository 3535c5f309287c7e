/**
 * The decision layer wired into a real `svc serve`: SERVICE_PDP_ENGINE=cedar with a policy file and
 * =opa against a loopback server speaking OPA's REST shape; a deny becomes 403 after the role
 * check allowed the request, and a misconfigured engine refuses startup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { call, startServer, SVC_BIN, tempDir, type TestServer } from '../helpers/server.js';

/** `svc serve` expected to refuse; resolves on 'close' so stderr is complete ('exit' may come first). */
function serveExpectingRefusal(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = tempDir('svc-pdp-dd-');
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [SVC_BIN, 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not refuse within 20 s: ${stderr}`));
    }, 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stderr });
    });
  });
}

const EMAIL = 'root@example.test';
const PASSWORD = 'a long enough passphrase';
const JSON_HEADERS = { 'content-type': 'application/json' };

async function bootstrap(server: TestServer): Promise<string> {
  const token = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0];
  assert.equal(
    (await call(server, 'POST', '/v1/setup', { body: JSON.stringify({ token, email: EMAIL, password: PASSWORD }), headers: JSON_HEADERS }))
      .status,
    201,
  );
  const login = await call(server, 'POST', '/v1/auth/login', {
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    headers: JSON_HEADERS,
  });
  assert.equal(login.status, 200, login.text);
  return login.json().token as string;
}

test('serve with SERVICE_PDP_ENGINE=cedar: a forbid turns an allowed request into 403', { timeout: 60_000 }, async () => {
  const dir = tempDir('svc-cedar-');
  const policies = join(dir, 'policies.cedar');
  writeFileSync(
    policies,
    'permit (principal, action, resource);\nforbid (principal is Svc::User, action == Svc::Action::"token:write", resource);\n',
  );
  const server = await startServer({ env: { SERVICE_PDP_ENGINE: 'cedar', SERVICE_PDP_CEDAR_POLICIES: policies } });
  try {
    const session = await bootstrap(server);
    const auth = { authorization: `Bearer ${session}` };
    assert.equal((await call(server, 'GET', '/v1/auth/whoami', { headers: auth })).status, 200);
    const issue = await call(server, 'POST', '/v1/tokens', { body: JSON.stringify({ name: 'x' }), headers: { ...auth, ...JSON_HEADERS } });
    assert.equal(issue.status, 403, issue.text);
    assert.equal(issue.json().error.code, 'forbidden');
    assert.match(issue.json().error.message, /policy \(cedar\)/);
    // Listing is token:read, not forbidden: the policy restricts exactly what it names.
    assert.equal((await call(server, 'GET', '/v1/tokens', { headers: auth })).status, 200);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve with SERVICE_PDP_ENGINE=opa: decisions come from the REST API, and a dead engine denies', { timeout: 60_000 }, async () => {
  const seen: string[] = [];
  let up = true;
  const opa = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      if (!up) return res.destroy();
      const { input } = JSON.parse(raw) as { input: { action: string } };
      seen.push(`${req.url} ${input.action}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ result: { allow: input.action !== 'token:write' } }));
    });
  });
  await new Promise<void>((r) => opa.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(opa.address() as AddressInfo).port}/v1/data/svc/authz`;
  const server = await startServer({ env: { SERVICE_PDP_ENGINE: 'opa', SERVICE_PDP_OPA_URL: url, SERVICE_PDP_OPA_TIMEOUT_MS: '500' } });
  try {
    const session = await bootstrap(server);
    const auth = { authorization: `Bearer ${session}` };
    assert.equal((await call(server, 'GET', '/v1/auth/whoami', { headers: auth })).status, 200);
    const issue = await call(server, 'POST', '/v1/tokens', { body: JSON.stringify({ name: 'x' }), headers: { ...auth, ...JSON_HEADERS } });
    assert.equal(issue.status, 403);
    assert.match(issue.json().error.message, /policy \(opa\)/);
    assert.ok(seen.includes('/v1/data/svc/authz self:read'), seen.join(', '));
    up = false;
    const dead = await call(server, 'GET', '/v1/auth/whoami', { headers: auth });
    assert.equal(dead.status, 403, 'an unreachable engine fails closed');
  } finally {
    await server.stop();
    opa.closeAllConnections();
    opa.close();
  }
});

test('serve refuses to start with a broken decision-layer configuration', { timeout: 60_000 }, async () => {
  const dir = tempDir('svc-pdp-bad-');
  const bad = join(dir, 'bad.cedar');
  writeFileSync(bad, 'permit (principal, action resource);');
  const envs: Array<Record<string, string>> = [
    { SERVICE_PDP_ENGINE: 'cedar' },
    { SERVICE_PDP_ENGINE: 'cedar', SERVICE_PDP_CEDAR_POLICIES: bad },
    { SERVICE_PDP_ENGINE: 'opa' },
    { SERVICE_PDP_ENGINE: 'xacml' },
  ];
  for (const env of envs) {
    const run = await serveExpectingRefusal(env);
    assert.notEqual(run.code, 0, `${JSON.stringify(env)} must refuse to start`);
    assert.doesNotMatch(run.stderr, /http listening/);
    // The fatal line can be lost when the process exits before the batched logger flushes (reported
    // to the serve area); when it is there, it must name the setting.
    if (run.stderr.includes('startup failed')) assert.match(run.stderr, /SERVICE_PDP|Cedar policies/, run.stderr.slice(-500));
  }
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Setup once per deployment (issue 37 item 3): replicas on one fresh database print one setup
 * token between them (the others say setup is pending and which replica printed it); the token is
 * accepted by a replica that did not print it, once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestServer } from '../helpers/server.js';
import { ADMIN, deploy, replicaSkip, rest, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('one setup token for the deployment', { skip }, () => {
  let dep: Deployment;
  before(async () => {
    dep = await deploy(2);
  });
  after(async () => dep?.stop());

  test('one replica prints the token, the other says setup is pending; the token works on the other replica, once', async () => {
    const tokens = dep.replicas.map((r) => /svcst_[A-Z2-7]{52}/.exec(r.stdout())?.[0]);
    assert.equal(tokens.filter((t) => t !== undefined).length, 1, dep.replicas.map((r) => r.stdout()).join('\n---\n'));
    const printer = tokens.findIndex((t) => t !== undefined);
    const other = dep.replicas[1 - printer] as TestServer;
    assert.match(other.stdout(), /setup is pending: the one-time setup token was printed by the replica .+ at \d{4}-/);
    const token = tokens[printer] as string;
    const done = await rest(other, 'POST', '/v1/setup', { body: { token, ...ADMIN, organization: 'Acme' } });
    assert.equal(done.status, 201, done.text);
    const again = await rest(dep.replicas[printer] as TestServer, 'POST', '/v1/setup', {
      body: { token, email: 'x@example.test', password: 'another password 123', organization: 'B' },
    });
    assert.equal(again.status, 409, again.text);
    const login = await rest(dep.replicas[printer] as TestServer, 'POST', '/v1/auth/login', { body: ADMIN });
    assert.equal(login.status, 200, login.text);
  });
});

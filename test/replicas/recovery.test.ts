/**
 * Recovery of audit intents with replicas (issue 37 item 6): changes left without their audit
 * record (markers in `audit_intents`) are recorded once, even when two replicas recover at the
 * same moment (both run the stale-marker recovery when they open).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pgQuery } from '../helpers/pg.js';
import type { TestServer } from '../helpers/server.js';
import { assertVerifiesEverywhere, chain, deploy, replicaSkip, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('audit intent recovery with replicas', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  before(async () => {
    dep = await deploy(1);
    ({ session, tenant } = await setup(dep));
  });
  after(async () => dep?.stop());

  test('two replicas starting together record each stale change once', async () => {
    const requests = Array.from({ length: 6 }, () => `req-${randomUUID()}`);
    for (const [i, r] of requests.entries()) {
      await pgQuery(
        dep.dsn,
        `insert into audit_intents (id, scope, chain, actor, actor_kind, route, request_id, created_at) values ($1, $2, $3, ` +
          `'user:x', 'user', 'POST /v1/agents', $4, $5)`,
        [randomUUID(), randomUUID(), tenant, r, `2020-01-01T00:00:0${i}.000000000Z`],
      );
    }
    await Promise.all([dep.start(), dep.start()]);
    // Both opened (each ran its recovery at open); the markers are gone.
    const left = await pgQuery<{ n: string }>(dep.dsn, 'select count(*) as n from audit_intents');
    assert.equal(Number(left[0]?.n), 0);
    const records = await chain(dep.replicas[2] as TestServer, session, tenant);
    const recovered = records.filter((r) => r.action === 'audit.recovered_after_failure' && requests.includes(r.target_id));
    assert.deepEqual(recovered.map((r) => r.target_id).sort(), [...requests].sort(), 'each change recorded exactly once');
    assert.deepEqual(records.map((r) => r.seq), Array.from({ length: records.length }, (_, i) => i + 1));
    await assertVerifiesEverywhere(dep, session, tenant);
  });
});

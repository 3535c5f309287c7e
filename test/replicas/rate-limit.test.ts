/**
 * Rate limits shared by replicas (issue 37, docs/scale-out.md): with a low `SERVICE_RATE_LIMIT_RPS`
 * and `SERVICE_RATE_LIMIT_BURST`, one principal's requests spread over two replicas are refused
 * (429 with Retry-After) after about the burst one replica allows, not after twice as many.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { reservationChunk } from '../../src/auth/rate-limit-shared.js';
import type { TestServer } from '../helpers/server.js';
import { deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();
const RPS = 1;
const BURST = 20;

describe('rate limits shared by replicas', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  before(async () => {
    dep = await deploy(2, { env: { SERVICE_RATE_LIMIT_RPS: String(RPS), SERVICE_RATE_LIMIT_BURST: String(BURST) } });
    ({ session, tenant } = await setup(dep));
  });
  after(async () => dep?.stop());

  test('requests through both replicas are refused after one burst, not two', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 3 * BURST; i++) {
      const r = await rest(dep.replicas[i % 2] as TestServer, 'GET', '/v1/agents', { token: session, tenant });
      statuses.push(r.status);
      if (r.status === 429) retryAfter ??= String(r.headers['retry-after']);
      else assert.equal(r.status, 200, r.text);
    }
    const elapsedS = (Date.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    const held = 2 * Math.ceil(1.5 * reservationChunk(RPS, BURST));
    // Per-replica buckets would admit 2 × BURST (+ the refill on each).
    assert.ok(allowed <= BURST + Math.ceil(elapsedS * RPS) + held, `${allowed} admitted in ${elapsedS} s: ${statuses.join(' ')}`);
    assert.ok(allowed >= BURST - held, `${allowed} admitted: ${statuses.join(' ')}`);
    assert.ok(statuses.indexOf(429) <= BURST + Math.ceil(elapsedS * RPS) + held, `first 429 at ${statuses.indexOf(429)}`);
    assert.match(retryAfter ?? '', /^[1-9][0-9]*$/);
    // Both replicas refuse: the bucket is the deployment's.
    for (const r of dep.replicas) assert.equal((await rest(r, 'GET', '/v1/agents', { token: session, tenant })).status, 429);
  });
});

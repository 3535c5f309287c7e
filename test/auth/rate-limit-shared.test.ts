/**
 * The per-principal rate limit on each store (docs/scale-out.md): on SQLite the one process keeps
 * its buckets in memory; on Postgres every replica draws from one bucket per principal in the
 * database, so two replicas together admit what one would, refused requests are answered without a
 * database round trip, and a database failure falls back to the replica's own bucket.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RateLimiter, type RateDecision } from '../../src/auth/rate-limit.js';
import { reservationChunk, SharedRateLimiter } from '../../src/auth/rate-limit-shared.js';
import { IdentityRuntime } from '../../src/auth/runtime.js';
import type { Store } from '../../src/store/store-types.js';
import { testStores, type TestStore } from '../helpers/stores.js';

const RATE = 1;
const BURST = 20;

for (const b of await testStores()) {
  describe(`${b.backend}: rate limits`, { skip: b.skip }, () => {
    let ts: TestStore;
    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
    });
    after(async () => ts?.dispose());

    const runtime = (store: Store) =>
      new IdentityRuntime({ store, dataDir: ts.config.dataDir ?? '', routes: [], rateLimit: { ratePerSecond: RATE, burst: BURST } });

    if (b.backend === 'sqlite') {
      test('one process: the in-memory bucket, answered without I/O', () => {
        const limiter = runtime(ts.store).limiter;
        assert.ok(limiter instanceof RateLimiter);
        const answers = Array.from({ length: BURST + 5 }, () => limiter.take('user:a') as RateDecision);
        assert.equal(answers.filter((d) => d.allowed).length, BURST);
        assert.equal(answers.at(-1)?.allowed, false);
      });
      return;
    }

    test('two replicas draw from one bucket: together they admit what one would, not twice as much', async () => {
      const replicas = [runtime(ts.store).limiter, runtime(await ts.reopen()).limiter];
      assert.ok(replicas.every((l) => l instanceof SharedRateLimiter));
      const started = Date.now();
      const answers: RateDecision[] = [];
      for (let i = 0; i < 3 * BURST; i++) answers.push(await (replicas[i % 2] as SharedRateLimiter).take('user:shared'));
      const elapsedS = (Date.now() - started) / 1000;
      const allowed = answers.filter((d) => d.allowed).length;
      // Tokens held unspent by a replica at the end: at most 1.5 chunks each.
      const held = 2 * Math.ceil(1.5 * reservationChunk(RATE, BURST));
      assert.ok(allowed >= BURST - held, `allowed ${allowed}`);
      assert.ok(allowed <= BURST + Math.ceil(elapsedS * RATE) + held, `allowed ${allowed} in ${elapsedS} s: more than one bucket`);
      const refused = answers.find((d) => !d.allowed);
      assert.ok(refused && refused.resetSeconds >= 1);
      // Another principal has its own bucket.
      assert.equal((await (replicas[1] as SharedRateLimiter).take('user:other')).allowed, true);
    });

    test('once the shared bucket is empty, a refusal is answered locally (no database round trip)', async () => {
      const limiter = runtime(ts.store).limiter as SharedRateLimiter;
      let first: RateDecision | undefined;
      for (let i = 0; i < 3 * BURST && first === undefined; i++) {
        const d = await limiter.take('user:drain');
        if (!d.allowed) first = d;
      }
      assert.ok(first, 'the bucket ran dry');
      const next = limiter.take('user:drain');
      assert.ok(!(next instanceof Promise), 'answered synchronously');
      assert.equal(next.allowed, false);
    });

    test('the database failing: the replica counts alone (its own bucket) and reports the error', async () => {
      const store = await ts.reopen();
      const errors: unknown[] = [];
      const limiter = new SharedRateLimiter(store, { ratePerSecond: RATE, burst: 3, onError: (e) => errors.push(e) });
      await store.close();
      const answers: RateDecision[] = [];
      for (let i = 0; i < 5; i++) answers.push(await limiter.take('user:offline'));
      assert.deepEqual(answers.map((d) => d.allowed), [true, true, true, false, false]);
      assert.ok(errors.length > 0);
    });
  });
}

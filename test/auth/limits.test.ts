import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoginLockout } from '../../src/auth/lockout.js';
import { RateLimiter, rateLimitHeaders } from '../../src/auth/rate-limit.js';

test('lockout: 5 failures in 15 minutes lock the key until the oldest leaves the window', () => {
  let now = 1_000_000;
  const l = new LoginLockout({ now: () => now });
  for (let i = 0; i < 5; i++) {
    assert.equal(l.retryAfter(['account:a']), 0);
    l.fail(['account:a', 'ip:1']);
    now += 60_000;
  }
  // first failure at t0, now = t0 + 5 min: locked for the remaining 10 minutes
  assert.equal(l.retryAfter(['account:a']), 600);
  assert.equal(l.retryAfter(['ip:1']), 600);
  assert.equal(l.retryAfter(['account:b']), 0);
  now += 600_000;
  assert.equal(l.retryAfter(['account:a']), 0, 'the first failure has left the window');
  l.clear('account:a');
  assert.equal(l.retryAfter(['account:a']), 0);
});

test('rate limiter: a burst, then refusal with Retry-After, then refill', () => {
  let now = 0;
  const r = new RateLimiter({ ratePerSecond: 2, burst: 3, now: () => now });
  const seen = [r.take('p'), r.take('p'), r.take('p')];
  assert.deepEqual(seen.map((d) => [d.allowed, d.remaining]), [[true, 2], [true, 1], [true, 0]]);
  const refused = r.take('p');
  assert.equal(refused.allowed, false);
  assert.deepEqual(rateLimitHeaders(refused), {
    'ratelimit-limit': '3',
    'ratelimit-remaining': '0',
    'ratelimit-reset': '1',
    'retry-after': '1',
  });
  assert.equal(r.take('q').allowed, true, 'per principal');
  now += 500;
  assert.equal(r.take('p').allowed, true, 'one token back after 1/rate seconds');
  assert.equal(new RateLimiter({ ratePerSecond: 0 }).enabled, false);
});

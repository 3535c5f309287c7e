/** Pool behaviour (run, abort, close, queue limit) with a tiny fixture worker. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTaskPool, WORKER_EXEC_ARGV, type TaskPool } from '../../src/workers/pool.js';
import { WorkerPoolError } from '../../src/workers/errors.js';
import type { SleepTask } from './fixtures/sleep-worker.js';

const FIXTURE = new URL('./fixtures/sleep-worker.js', import.meta.url);
type Res = { value: number; threadId: number; execArgv: string[] };

function pool(threads: number, maxQueue?: number): TaskPool<SleepTask, Res> {
  return createTaskPool<SleepTask, Res>(maxQueue === undefined ? { filename: FIXTURE, threads } : { filename: FIXTURE, threads, maxQueue });
}

function isCode(code: string) {
  return (err: unknown): boolean => err instanceof WorkerPoolError && err.code === code;
}

test('tasks run on the requested number of threads', async () => {
  const p = pool(2);
  try {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => p.run({ ms: 30, value: i })));
    assert.deepEqual(results.map((r) => r.value), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(new Set(results.map((r) => r.threadId)).size, 2);
    assert.equal(p.threads, 2);
  } finally {
    await p.close();
  }
});

test("a task's own error reaches the caller", async () => {
  const p = pool(1);
  try {
    await assert.rejects(p.run({ ms: 1, value: 3, fail: true }), /fixture failure 3/);
    assert.equal((await p.run({ ms: 1, value: 4 })).value, 4, 'the worker survives a failed task');
  } finally {
    await p.close();
  }
});

test('abort: a running task and a queued task reject with code aborted; others finish', async () => {
  const p = pool(1);
  try {
    const running = new AbortController();
    const queued = new AbortController();
    const a = p.run({ ms: 5_000, value: 1 }, running.signal);
    const b = p.run({ ms: 5_000, value: 2 }, queued.signal);
    const c = p.run({ ms: 10, value: 3 });
    setTimeout(() => {
      queued.abort();
      running.abort();
    }, 50);
    const started = Date.now();
    await assert.rejects(a, isCode('aborted'));
    await assert.rejects(b, isCode('aborted'));
    assert.equal((await c).value, 3);
    assert.ok(Date.now() - started < 4_000, 'abort does not wait for the task');
    const pre = new AbortController();
    pre.abort();
    await assert.rejects(p.run({ ms: 1, value: 4 }, pre.signal), isCode('aborted'));
  } finally {
    await p.close();
  }
});

test('graceful close lets queued tasks finish, then refuses new ones', async () => {
  const p = pool(1);
  const pending = [1, 2, 3].map((v) => p.run({ ms: 20, value: v }));
  const closing = p.close();
  await assert.rejects(p.run({ ms: 1, value: 9 }), isCode('pool-closed'));
  assert.deepEqual((await Promise.all(pending)).map((r) => r.value), [1, 2, 3]);
  await closing;
});

test('forced close cancels what is still queued', async () => {
  const p = pool(1);
  const running = p.run({ ms: 200, value: 1 });
  const queued = p.run({ ms: 200, value: 2 });
  const settled = Promise.allSettled([running, queued]);
  await new Promise((r) => setTimeout(r, 20));
  await p.close({ force: true });
  const [, q] = await settled;
  assert.equal(q.status, 'rejected');
});

test('a bounded queue rejects with queue-full instead of growing', async () => {
  const p = pool(1, 1);
  try {
    const first = p.run({ ms: 100, value: 1 });
    await new Promise((r) => setTimeout(r, 20)); // let the first task reach the worker
    const second = p.run({ ms: 1, value: 2 });
    await assert.rejects(p.run({ ms: 1, value: 3 }), isCode('queue-full'));
    assert.deepEqual([(await first).value, (await second).value], [1, 2]);
  } finally {
    await p.close();
  }
});

test('workers start with require(esm) off where Node has it (the V8 IsGraphAsync crash in CI)', async () => {
  const has = process.allowedNodeEnvironmentFlags.has('--experimental-require-module');
  assert.equal(WORKER_EXEC_ARGV.execArgv?.includes('--no-experimental-require-module') ?? false, has);
  const p = pool(1);
  try {
    const r = await p.run({ ms: 0, value: 1 });
    assert.equal(r.execArgv.includes('--no-experimental-require-module'), has, `worker execArgv: ${JSON.stringify(r.execArgv)}`);
  } finally {
    await p.close();
  }
});

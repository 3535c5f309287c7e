/** The collector spool on a real directory: durable appends, torn-tail repair, ack-driven deletion, cursors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Spool } from '../../src/collector/spool.js';
import type { Item } from '../../src/collector/items.js';

const item = (ref: string): Item => ({ kind: 'edge', fields: { resource_ref: ref } });
const dir = () => mkdtempSync(path.join(tmpdir(), 'svc-spool-'));

test('appends survive a reopen in order, with their ids and the latest cursor per source', () => {
  const d = dir();
  try {
    const s = Spool.open({ dir: d });
    const a = s.append('src-a', { offset: 10 }, [item('a1')]);
    const b = s.append('src-b', { offset: 5 }, [item('b1')]);
    const c = s.append('src-a', { offset: 20 }, [item('a2'), item('a3')]);
    s.close();
    const again = Spool.open({ dir: d });
    assert.deepEqual(again.pending().map((x) => x.id), [a.id, b.id, c.id]);
    assert.deepEqual(again.pending()[2]?.items, [item('a2'), item('a3')]);
    assert.deepEqual(again.cursor('src-a'), { offset: 20 });
    assert.deepEqual(again.cursor('src-b'), { offset: 5 });
    assert.equal(again.cursor('src-c'), undefined);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('a torn last line (crash mid-write) is cut off; the batches before it stay', () => {
  const d = dir();
  try {
    const s = Spool.open({ dir: d });
    const a = s.append('src', { offset: 1 }, [item('x')]);
    s.close();
    const seg = readdirSync(d).find((n) => n.startsWith('seg-')) as string;
    appendFileSync(path.join(d, seg), '{"id":"half-writ');
    const again = Spool.open({ dir: d });
    assert.deepEqual(again.pending().map((x) => x.id), [a.id]);
    assert.ok(readFileSync(path.join(d, seg), 'utf8').endsWith('\n'), 'the torn tail was truncated');
    const b = again.append('src', { offset: 2 }, [item('y')]);
    again.close();
    assert.deepEqual(Spool.open({ dir: d }).pending().map((x) => x.id), [a.id, b.id]);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('a segment is deleted only once every batch in it is acked; acked batches are not pending', () => {
  const d = dir();
  try {
    const s = Spool.open({ dir: d, segmentBatches: 2 });
    const ids = [1, 2, 3].map((i) => s.append('src', { offset: i }, [item(String(i))]).id);
    assert.equal(readdirSync(d).filter((n) => n.startsWith('seg-')).length, 2);
    s.ack(ids[1] as string);
    assert.equal(readdirSync(d).filter((n) => n.startsWith('seg-')).length, 2, 'half-acked segment stays');
    assert.deepEqual(s.pending().map((x) => x.id), [ids[0], ids[2]]);
    s.ack(ids[0] as string);
    assert.equal(readdirSync(d).filter((n) => n.startsWith('seg-')).length, 1);
    assert.equal(s.size, 1);
    s.ack(ids[2] as string);
    assert.equal(s.size, 0);
    assert.equal(readdirSync(d).filter((n) => n.startsWith('seg-')).length, 0);
    s.close();
    const again = Spool.open({ dir: d });
    assert.equal(again.size, 0);
    // The cursor outlives the deleted segments (state.json).
    assert.deepEqual(again.cursor('src'), { offset: 3 });
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('a newer cursor in state.json wins over an older one left in an unacked segment', () => {
  const d = dir();
  try {
    const s = Spool.open({ dir: d, segmentBatches: 1 });
    s.append('src', { offset: 100 }, [item('old')]);
    const newer = s.append('src', { offset: 200 }, [item('new')]);
    s.ack(newer.id);
    s.close();
    const again = Spool.open({ dir: d });
    assert.equal(again.size, 1);
    assert.deepEqual(again.cursor('src'), { offset: 200 }, 'must not re-read 100..200 (it would be spooled twice under new ids)');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('one process per spool: a live owner lock refuses; a dead owner lock is taken over', () => {
  const d = dir();
  try {
    writeFileSync(path.join(d, 'lock'), '1');
    assert.throws(() => Spool.open({ dir: d }), /in use by process 1/);
    writeFileSync(path.join(d, 'lock'), '999999999');
    const s = Spool.open({ dir: d });
    assert.equal(readFileSync(path.join(d, 'lock'), 'utf8'), String(process.pid));
    s.close();
    assert.equal(existsSync(path.join(d, 'lock')), false);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

/** The JSON-lines tailer on real files: partial lines, resume by cursor, rotation by rename, truncation. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { JsonlTailer } from '../../src/collector/tailer.js';

function withDir(fn: (d: string) => void): void {
  const d = mkdtempSync(path.join(tmpdir(), 'svc-tail-'));
  try {
    fn(d);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

test('reads only complete lines; a partial line waits for its newline', () => {
  withDir((d) => {
    const f = path.join(d, 'a.jsonl');
    writeFileSync(f, 'one\ntwo\nthr');
    const t = new JsonlTailer(f);
    assert.deepEqual(t.read(100).lines, ['one', 'two']);
    assert.deepEqual(t.read(100).lines, []);
    appendFileSync(f, 'ee\n');
    assert.deepEqual(t.read(100).lines, ['three']);
    t.close();
  });
});

test('maxLines and maxBytes bound a read; the cursor resumes exactly after the last line read', () => {
  withDir((d) => {
    const f = path.join(d, 'a.jsonl');
    writeFileSync(f, Array.from({ length: 10 }, (_, i) => `line-${i}`).join('\n') + '\n');
    const t = new JsonlTailer(f);
    const first = t.read(3);
    assert.deepEqual(first.lines, ['line-0', 'line-1', 'line-2']);
    t.close();
    const resumed = new JsonlTailer(f, first.cursor);
    const small = resumed.read(100, 10);
    assert.deepEqual(small.lines, ['line-3', 'line-4'].slice(0, small.lines.length));
    assert.ok(small.lines.length >= 1 && small.lines.length <= 2);
    const rest = resumed.read(100);
    assert.deepEqual([...small.lines, ...rest.lines], ['line-3', 'line-4', 'line-5', 'line-6', 'line-7', 'line-8', 'line-9']);
    resumed.close();
  });
});

test('rotation by rename + recreate: the old file is finished, then the new one read from its start', () => {
  withDir((d) => {
    const f = path.join(d, 'a.jsonl');
    writeFileSync(f, 'a1\n');
    const t = new JsonlTailer(f);
    assert.deepEqual(t.read(100).lines, ['a1']);
    appendFileSync(f, 'a2\n');
    renameSync(f, `${f}.1`);
    writeFileSync(f, 'b1\nb2\n');
    assert.deepEqual(t.read(100).lines, ['a2', 'b1', 'b2']);
    t.close();
  });
});

test('rotated while stopped: a restart finds the renamed file by inode, finishes it, then the new file', () => {
  withDir((d) => {
    const f = path.join(d, 'a.jsonl');
    writeFileSync(f, 'a1\n');
    const t = new JsonlTailer(f);
    const { cursor } = t.read(100);
    t.close();
    appendFileSync(f, 'a2\n');
    renameSync(f, `${f}.1`);
    writeFileSync(f, 'b1\n');
    const again = new JsonlTailer(f, cursor);
    assert.deepEqual(again.read(100).lines, ['a2', 'b1']);
    again.close();
  });
});

test('truncation in place (copytruncate) starts again at offset 0', () => {
  withDir((d) => {
    const f = path.join(d, 'a.jsonl');
    writeFileSync(f, 'long-line-number-one\nlong-line-number-two\n');
    const t = new JsonlTailer(f);
    assert.equal(t.read(100).lines.length, 2);
    truncateSync(f, 0);
    appendFileSync(f, 'new\n');
    assert.deepEqual(t.read(100).lines, ['new']);
    t.close();
  });
});

test('a file that does not exist yet is picked up when it appears', () => {
  withDir((d) => {
    const f = path.join(d, 'later.jsonl');
    const t = new JsonlTailer(f);
    assert.deepEqual(t.read(100).lines, []);
    writeFileSync(f, 'hello\n');
    assert.deepEqual(t.read(100).lines, ['hello']);
    t.close();
  });
});

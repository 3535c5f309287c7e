/**
 * The guard on the catalog: every declared event type is either emitted into the durable log
 * somewhere in src/ (an `{ type: '…', tenant, … }` literal handed to `emit(e, tx)` / `bus.record`;
 * the bus refuses a durable type without its transaction, test/events/bus.test.ts) or declared
 * `durable: false` (in-process only; the subscription API refuses it, test/events/durable-events.test.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isDurable } from '../../src/events/event-types.js';
import { eventCatalog } from '../../src/routes.js';
import { REPO_ROOT } from '../helpers/server.js';

function sources(dir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts')) out.push({ file: path.relative(REPO_ROOT, p), text: readFileSync(p, 'utf8') });
  }
  return out;
}

const src = sources(path.join(REPO_ROOT, 'src'));

/** Whether `text` names `type` other than in its declaration. */
function emits(text: string, type: string): boolean {
  const lit = `'${type}'`;
  for (let i = text.indexOf(lit); i >= 0; i = text.indexOf(lit, i + 1)) {
    const before = text.slice(Math.max(0, i - 12), i);
    const declared = /\b(decl|notYet)\($/.test(before) || (/type: $/.test(before) && text.startsWith(', source:', i + lit.length));
    if (!declared) return true;
  }
  return false;
}

describe('event catalog: durable or explicitly not', () => {
  it('every durable type is named by some emitting source (its declaration, `decl(…)` or `type: …, source: …`, does not count)', () => {
    const silent = eventCatalog()
      .list()
      .filter(isDurable)
      .filter((d) => !src.some((f) => emits(f.text, d.type)))
      .map((d) => d.type);
    assert.deepEqual(silent, [], 'declared durable, never emitted: emit them in their change\'s transaction, or declare `durable: false`');
  });

  it('publish() (in-process only) is used for no durable type', () => {
    const durable = new Set(eventCatalog().list().filter(isDurable).map((d) => d.type));
    const misuse: string[] = [];
    for (const f of src) {
      for (const m of f.text.matchAll(/\.publish\(\[\s*\{\s*type:\s*'([a-z0-9_.]+)'/g)) {
        if (durable.has(m[1] as string)) misuse.push(`${f.file}: ${m[1]}`);
      }
    }
    assert.deepEqual(misuse, []);
  });
});

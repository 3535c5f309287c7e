/**
 * The console's weight budget (docs/web.md): what `npm run build` ships, gzip-compressed as
 * `svc serve` sends it. The first page needs the entry script and the stylesheet only; the graph
 * library comes with the access map.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../helpers/server.js';

/** Kilobytes (1024 bytes), gzip level 9. */
export const BUDGET_KB = { entry: 40, css: 8, allJs: 180 };

export function bundleSizes(): { entryJs: number; css: number; allJs: number; files: Record<string, number> } {
  const dir = path.join(REPO_ROOT, 'dist', 'web', 'assets');
  const files: Record<string, number> = {};
  for (const f of readdirSync(dir)) files[f] = gzipSync(readFileSync(path.join(dir, f)), { level: 9 }).length;
  const sum = (pred: (f: string) => boolean) => Object.entries(files).filter(([f]) => pred(f)).reduce((a, [, n]) => a + n, 0);
  return { entryJs: sum((f) => /^index-.*\.js$/.test(f)), css: sum((f) => f.endsWith('.css')), allJs: sum((f) => f.endsWith('.js')), files };
}

test('bundle budget: entry script, stylesheet and all scripts stay within their gzip budgets', () => {
  const s = bundleSizes();
  const kb = (n: number) => Math.round((n / 1024) * 10) / 10;
  assert.ok(s.entryJs > 0 && s.css > 0, 'the console was built into dist/web');
  assert.ok(s.entryJs + s.css <= BUDGET_KB.entry * 1024, `first page: ${kb(s.entryJs + s.css)} KB > ${BUDGET_KB.entry} KB`);
  assert.ok(s.css <= BUDGET_KB.css * 1024, `CSS: ${kb(s.css)} KB > ${BUDGET_KB.css} KB`);
  assert.ok(s.allJs <= BUDGET_KB.allJs * 1024, `all JS: ${kb(s.allJs)} KB > ${BUDGET_KB.allJs} KB`);
  // The index page names only the entry files: the graph chunk is not on the first page.
  const html = readFileSync(path.join(REPO_ROOT, 'dist', 'web', 'index.html'), 'utf8');
  assert.doesNotMatch(html, /graph-/);
});
